package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// postJoin posts a join body and returns the response (the caller closes
// it).
func (ts *testServer) postJoin(t *testing.T, body string, accept string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", ts.url+"/v1/indexes/plays/join", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// normalize re-encodes JSON objects so that two answers compare as sorted
// lines.
func normalize(t *testing.T, rows []map[string]any) []string {
	t.Helper()
	var out []string
	for _, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

// TestJoinStreams: the join endpoint streams NDJSON rows whose values are
// the JSON values the lookup endpoint gives for the same rows, and the same
// rows as an Arrow IPC stream with the face's types.
func TestJoinStreams(t *testing.T) {
	ts := start(t, 4, Config{})
	hot := strconv.FormatInt(ts.lake.Hot, 10)
	body := `{"keys": {"user_id": [` + hot + `, "2654435762"]}, "select": ["user_id", "ts", "duration_ms", "track_uri"]}`
	resp := ts.postJoin(t, body, "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" || resp.Header.Get("Ariadne-Files-Located") != "4" {
		t.Fatalf("join: %d %v", resp.StatusCode, resp.Header)
	}
	var joined []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if m["error"] != nil {
			t.Fatalf("stream error: %v", m)
		}
		joined = append(joined, m)
	}
	resp.Body.Close()
	// Field order is the column order.
	var looked []map[string]any
	for _, k := range []string{hot, "2654435762"} {
		req := map[string]any{"column": "user_id", "key": k, "columns": []string{"user_id", "ts", "duration_ms", "track_uri"}, "limit": 1000}
		code, m := ts.call(t, "POST", "/v1/indexes/plays/lookup", req)
		if code != 200 || m["cursor"] != nil {
			t.Fatalf("lookup %s: %d %v", k, code, m["cursor"])
		}
		for _, r := range rowsOf(m) {
			for c, v := range r {
				if f, ok := v.(float64); ok { // the lookup helper decodes numbers as floats
					r[c] = json.Number(strconv.FormatFloat(f, 'f', -1, 64))
				}
			}
			looked = append(looked, r)
		}
	}
	a, b := normalize(t, joined), normalize(t, looked)
	if len(a) < 300 || !slices.Equal(a, b) {
		t.Fatalf("join streamed %d rows, lookup %d", len(a), len(b))
	}

	// Arrow: the same number of rows, int64 keys, UTC microsecond times.
	resp = ts.postJoin(t, body, arrowMIME)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != arrowMIME {
		t.Fatalf("arrow join: %d %v", resp.StatusCode, resp.Header)
	}
	rd, err := ipc.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	sch := rd.Schema()
	if sch.NumFields() != 4 || sch.Field(0).Type.ID() != arrow.INT64 || sch.Field(2).Type.ID() != arrow.INT64 ||
		sch.Field(1).Type.(*arrow.TimestampType).TimeZone != "UTC" {
		t.Fatalf("arrow schema %v", sch)
	}
	var arrowRows []map[string]any
	for rd.Next() {
		rec := rd.RecordBatch()
		uid := rec.Column(0).(*array.Int64)
		tsc := rec.Column(1).(*array.Timestamp)
		dur := rec.Column(2).(*array.Int64)
		tr := rec.Column(3).(*array.String)
		for i := range int(rec.NumRows()) {
			arrowRows = append(arrowRows, map[string]any{
				"user_id": json.Number(strconv.FormatInt(uid.Value(i), 10)), "duration_ms": json.Number(strconv.FormatInt(dur.Value(i), 10)),
				"ts": time.UnixMicro(int64(tsc.Value(i))).UTC(), "track_uri": tr.Value(i),
			})
		}
	}
	if err := rd.Err(); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if c := normalize(t, arrowRows); !slices.Equal(c, a) {
		t.Fatalf("arrow gave %d rows, NDJSON %d; first %v vs %v", len(c), len(a), c[:min(1, len(c))], a[:1])
	}

	// A limit cuts the stream; errors before the stream are JSON errors.
	resp = ts.postJoin(t, `{"keys": {"user_id": [`+hot+`]}, "limit": 5}`, "")
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := bytes.Count(data, []byte("\n")); n != 5 {
		t.Fatalf("limit 5: %d lines", n)
	}
	for body, kind := range map[string]string{
		`{"keys": {"user_id": ["u1"]}}`:               "invalid argument",
		`{"keys": {"user_id": [1, 2], "x": [1]}}`:     "invalid argument",
		`{"keys": {"track_uri": ["t"]}}`:              "invalid argument",
		`{"keys": {"user_id": [1]}, "select": ["x"]}`: "column not found",
		`{"keys": {"user_id": [1]}, "how": "cross"}`:  "invalid argument",
		`{"keys": {"user_id": [{"a": 1}]}}`:           "invalid argument",
	} {
		code, m := ts.call(t, "POST", "/v1/indexes/plays/join", body)
		if code != 400 || m["error"].(map[string]any)["kind"] != kind {
			t.Errorf("%s: %d %v, want 400 %s", body, code, m, kind)
		}
	}
}

// TestJoinEngineChoice: a join may name its engine among those the server
// allows; another is a 400 naming the allowed ones, and the Spark engine
// without a configured Spark Connect URL is an invalid argument, not a
// crash or a connection attempt to a URL of the client's.
func TestJoinEngineChoice(t *testing.T) {
	ts := start(t, 4, Config{})
	hot := strconv.FormatInt(ts.lake.Hot, 10)
	body := func(eng string) string {
		return `{"keys": {"user_id": [` + hot + `]}, "select": ["user_id", "ts"], "engine": "` + eng + `"}`
	}
	resp := ts.postJoin(t, body("duckdb"), "")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || bytes.Count(b, []byte("\n")) == 0 {
		t.Fatalf("duckdb: %d %s", resp.StatusCode, b)
	}
	for _, eng := range []string{"spark", "postgres"} {
		code, m := ts.call(t, "POST", "/v1/indexes/plays/join", body(eng))
		if code != 400 || !bytes.Contains([]byte(m["error"].(map[string]any)["message"].(string)), []byte("[duckdb]")) {
			t.Fatalf("%s: %d %v", eng, code, m)
		}
	}
	both := start(t, 4, Config{JoinEngines: []string{"duckdb", "spark"}})
	code, m := both.call(t, "POST", "/v1/indexes/plays/join", body("spark"))
	if code != 400 || m["error"].(map[string]any)["kind"] != "invalid argument" {
		t.Fatalf("spark without a remote: %d %v", code, m)
	}
}
