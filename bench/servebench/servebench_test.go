package servebench

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/server"
)

// TestRun runs the load generator on a tiny lake: every lookup succeeds,
// covered lookups read no data file once warm, and a second run reuses the
// lake.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, SizeMB: 2, Users: 300, Concurrency: 4, Duration: 300 * time.Millisecond, Covered: true, Limit: 50,
		Baseline: true, Sample: 100 * time.Millisecond}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Phases) != 2 || rep.Lake.Rows == 0 || rep.WarmUp.Requests == 0 {
		t.Fatalf("report %+v", rep)
	}
	cold, warm := rep.Phases[0], rep.Phases[1]
	if cold.Requests != 8 || cold.Errors != 0 || warm.Errors != 0 || warm.Requests == 0 || warm.Rows == 0 {
		t.Fatalf("phases %+v", rep.Phases)
	}
	if warm.DataRequests != 0 || warm.IndexRequests != 0 || cold.IndexRequests == 0 {
		t.Fatalf("covered warm lookups made storage requests, or cold ones none: %+v", rep.Phases)
	}
	if warm.Rows > int64(warm.Requests)*50 {
		t.Fatalf("more rows than the limit: %+v", warm)
	}
	if warm.CPUMSPerLookup <= 0 || len(warm.Samples) < 2 || rep.Soak == nil || rep.Soak.RSSFirstBytes == 0 || rep.Soak.CacheBudgetBytes == 0 {
		t.Fatalf("cpu %v, samples %+v, soak %+v", warm.CPUMSPerLookup, warm.Samples, rep.Soak)
	}
	sum := 0
	for _, x := range warm.Samples {
		sum += x.Requests
	}
	if sum > warm.Requests {
		t.Fatalf("samples hold %d lookups of %d", sum, warm.Requests)
	}
	if b := rep.DuckDB; b == nil || b.Phase.Requests == 0 || b.Phase.Errors != 0 || b.QPSRatio == 0 {
		t.Fatalf("duckdb baseline %+v", rep.DuckDB)
	}
	// DuckDB and the server give the same rows for the same keys.
	db, err := newDuckBaseline(context.Background(), filepath.Join(dir, "lake"), []string{"ts", "duration_ms"}, 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := ariadne.Open(context.Background(), "file://"+filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ix, err := st.Index(context.Background(), indexName)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		k := strconv.FormatInt(lakegen.UserID(uint64(i)), 10)
		n, _, err := db.lookup(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		res, err := ix.Lookup(context.Background(), ariadne.LookupRequest{Column: "user_id", Key: k, Columns: []string{"ts", "duration_ms"}, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if n != len(res.Rows) || n == 0 {
			t.Fatalf("key %s: duckdb %d rows, server %d", k, n, len(res.Rows))
		}
	}
	cfg.Covered = false
	rep2, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Lake != rep.Lake || rep2.Phases[1].Errors != 0 {
		t.Fatalf("second run: %+v", rep2)
	}
}

// TestRunURL loads a server started elsewhere (here, in the test) through
// its URL, with storage work read from its /metrics.
func TestRunURL(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, _, err := prepare(ctx, Config{Dir: dir, SizeMB: 2, Users: 300, Progress: io.Discard}); err != nil {
		t.Fatal(err)
	}
	st, err := ariadne.Open(ctx, "file://"+filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := server.New(st, server.Config{Tokens: []string{"tk"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	defer hs.Close()
	keys := []string{strconv.FormatInt(lakegen.UserID(0), 10), strconv.FormatInt(lakegen.UserID(1), 10), "-1"}
	rep, err := Run(ctx, Config{URL: "http://" + ln.Addr().String(), Token: "tk", Index: indexName, Column: "user_id", Keys: keys,
		Concurrency: 2, ColdRequests: 4, Duration: 200 * time.Millisecond, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	first, steady := rep.Phases[0], rep.Phases[1]
	if first.Name != "first" || first.Requests != 4 || first.Errors != 0 || steady.Errors != 0 || steady.Requests == 0 {
		t.Fatalf("phases %+v", rep.Phases)
	}
	// The first lookups read the row index and data files; the metrics say so.
	if first.IndexRequests == 0 || first.DataRequests == 0 || first.Rows == 0 {
		t.Fatalf("first phase: %+v", first)
	}
}

// TestCountRows counts the rows of answers as encoding/json does,
// including strings holding brackets, quotes and escapes.
func TestCountRows(t *testing.T) {
	for _, body := range []string{
		`{"rows":[],"columns":[]}`,
		`{"rows":[{"a":1},{"a":"}{[\"]"},{"a":{"b":[1,{}]}}],"cursor":"x"}`,
		`{"rows":[{"a":"\\"},{"b":null}],"version":1}`,
		`{"rows":[{"a":"x\\\"]}"},{"b":"\\\\"},{"c":""}],"version":1}`,
	} {
		var page struct {
			Rows []json.RawMessage `json:"rows"`
		}
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatal(err)
		}
		n, err := countRows([]byte(body))
		if err != nil || n != len(page.Rows) {
			t.Errorf("%s: %d rows, %v; want %d", body, n, err, len(page.Rows))
		}
	}
	if _, err := countRows([]byte(`{"error":{}}`)); err == nil {
		t.Error("an error answer counted")
	}
	if _, err := countRows([]byte(`{"rows":[{"a":1}`)); err == nil {
		t.Error("a cut answer counted")
	}
}

// TestKeyDraws checks the two key draws: the Zipf draw asks for the
// heaviest user often, the light draw spreads over the users; an unknown
// draw is refused.
func TestKeyDraws(t *testing.T) {
	lc := lakegen.Config{Users: 100_000}
	top := func(draw string) float64 {
		k := newKeys(lc, 1, draw)
		counts := map[string]int{}
		best := 0
		for range 20_000 {
			key := k.next()
			counts[key]++
			best = max(best, counts[key])
		}
		return float64(best) / 20_000
	}
	if z := top(DrawZipf); z < 0.001 {
		t.Errorf("zipf draw: the most asked user has %.4f of the lookups, want ≥ 0.001", z)
	}
	if l := top(DrawLight); l > 0.0004 {
		t.Errorf("light draw: the most asked user has %.4f of the lookups, want ≤ 0.0004", l)
	}
	if _, err := Run(context.Background(), Config{Dir: t.TempDir(), Draw: "heavy"}); err == nil {
		t.Error("an unknown draw was accepted")
	}
}
