package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/cli"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/sparkengine"
	"github.com/ariadne-go/ariadne/store"
)

// riRow is a data row of the row index lake: nullable keys of each type
// the Spark engine builds.
type riRow struct {
	ID   *int64   `parquet:"id,optional"`
	Name *string  `parquet:"name,optional"`
	I32  *int32   `parquet:"i32,optional"`
	Day  *int32   `parquet:"day,date,optional"`
	TS   *int64   `parquet:"ts,timestamp(microsecond),optional"`
	D    *float64 `parquet:"d,optional"`
	B    []byte   `parquet:"b,optional"`
	Flag *bool    `parquet:"flag,optional"`
	V    int64    `parquet:"v"`
}

// writeRowIndexLake writes four Parquet files of several row groups each
// (row group sizes differ per file), keys in runs of 2–5 rows that recur
// and cross row group boundaries, null keys between and inside runs, and
// returns their file:// URIs.
func writeRowIndexLake(t *testing.T, dir string) []string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var uris []string
	for fi := range 4 {
		rows := make([]riRow, 700+fi*211)
		for i := range rows {
			r := &rows[i]
			r.V = int64(fi*10000 + i)
			if (i*5+fi)%17 == 0 || i%23 == 7 {
				continue // null keys
			}
			k := int64((i / (2 + fi)) % 53)
			r.ID = &k
			name := fmt.Sprintf("user-%02d", (k*7)%31)
			r.Name = &name
			i32 := int32(k - 26)
			r.I32 = &i32
			day := int32(19500 + k%12)
			r.Day = &day
			ts := 1_700_000_000_000_000 + (k%19)*3_600_000_000
			r.TS = &ts
			d := float64(k%9) - 4
			if d == 0 && i%2 == 1 {
				d = -d // -0.0 and 0.0 in one run
			}
			r.D = &d
			r.B = []byte{byte(k % 11), 0xff}
			fl := k%4 == 1
			r.Flag = &fl
		}
		p := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", fi))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewGenericWriter[riRow](f, parquet.MaxRowsPerRowGroup(int64(150+fi*40)), parquet.PageBufferSize(1024))
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, "file://"+p)
	}
	return uris
}

// riLookups returns every lookup's rows (file, row group, row) of a row
// index: each key value of the lake, absent keys, and for a sorted index
// ranges; the answers to compare between builds.
func riLookups(t *testing.T, ctx context.Context, idx store.Store, name string, res rowindex.Resolver, keys []any, sorted bool) []string {
	t.Helper()
	ri, err := rowindex.Open(ctx, idx, name, rowindex.Options{Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	add := func(q rowindex.Query, what string) {
		r, err := ri.Lookup(ctx, q)
		if err != nil {
			t.Fatalf("lookup %s: %v", what, err)
		}
		for _, row := range r.Rows {
			out = append(out, fmt.Sprintf("%s -> %v %s rg%d r%d", what, row.Key, filepath.Base(row.File), row.RowGroup, row.Row))
		}
		if len(r.Rows) == 0 {
			out = append(out, what+" -> none")
		}
	}
	for _, k := range keys {
		add(rowindex.Query{Key: k}, fmt.Sprintf("%v", k))
	}
	if sorted && len(keys) > 2 {
		add(rowindex.Query{Low: keys[0], High: keys[len(keys)/2]}, "range")
	}
	return out
}

// TestSparkEngineRowIndex is issue 14's "a row index built by Spark returns
// the same lookups as one built locally": hash and sorted row indexes on
// an integer and a string key (and hash ones on int32, date, timestamp,
// double with -0.0, binary and boolean keys) over four Parquet files with
// several row groups and null keys are built twice — locally, and with
// the key runs computed by Spark (_metadata.row_index, two files per
// request, the second half of the files added by an Update) — and must
// have the same data-file table and byte-identical fragments and key
// directories, hence the same lookups (compared too). Spark's scan metrics
// must show it read each file once per build. Then a connection cut while
// Spark computes the runs fails the build with a connection error and
// leaves the index folder byte for byte unchanged; the rerun completes
// with the local build's row index.
func TestSparkEngineRowIndex(t *testing.T) {
	e := loadEnv(t)
	ctx := testContext(t, 30*time.Minute)
	dir := t.TempDir()
	uris := writeRowIndexLake(t, filepath.Join(dir, "lake"))
	srv, err := e.StartConnectServer(ctx, ConnectOptions{LogFile: filepath.Join(dir, "connect-server.log")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	eng, err := sparkengine.New(ctx, srv.Remote(), sparkengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	res := store.NewResolver(store.ResolverOptions{})
	var dataBytes int64
	for _, u := range uris {
		fi, err := os.Stat(strings.TrimPrefix(u, "file://"))
		if err != nil {
			t.Fatal(err)
		}
		dataBytes += fi.Size()
	}

	keysOf := map[string][]any{}
	for k := range int64(53) {
		keysOf["id"] = append(keysOf["id"], k)
		keysOf["name"] = append(keysOf["name"], fmt.Sprintf("user-%02d", (k*7)%31))
		keysOf["i32"] = append(keysOf["i32"], k-26)
	}
	keysOf["id"] = append(keysOf["id"], int64(999), int64(-1))
	keysOf["name"] = append(keysOf["name"], "nobody")
	// Dates and timestamps as their Parquet values (days, microseconds):
	// the key class is int.
	for k := range int64(12) {
		keysOf["day"] = append(keysOf["day"], 19500+k)
	}
	for k := range int64(19) {
		keysOf["ts"] = append(keysOf["ts"], 1_700_000_000_000_000+k*3_600_000_000)
	}
	for k := range 9 {
		keysOf["d"] = append(keysOf["d"], float64(k)-4)
	}
	for k := range 11 {
		keysOf["b"] = append(keysOf["b"], string([]byte{byte(k), 0xff}))
	}
	keysOf["flag"] = []any{true, false}

	type tc struct {
		key  string
		kind rowindex.Kind
	}
	cases := []tc{{"id", rowindex.KindHash}, {"id", rowindex.KindSorted}, {"name", rowindex.KindHash}, {"name", rowindex.KindSorted}}
	for _, k := range []string{"i32", "day", "ts", "d", "b", "flag"} {
		cases = append(cases, tc{k, rowindex.KindHash})
	}
	build := func(t *testing.T, root string, def rowindex.Definition, opts ...rowindex.BuildOption) (store.Store, *rowindex.Manifest, rowindex.BuildStats, rowindex.BuildStats) {
		idx := openStore(t, ctx, root)
		_, st1, err := rowindex.Create(ctx, idx, def, res, uris[:2], opts...)
		if err != nil {
			t.Fatal(err)
		}
		man, st2, err := rowindex.Update(ctx, idx, def.Name, res, uris, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return idx, man, st1, st2
	}
	for _, c := range cases {
		t.Run(c.key+"/"+string(c.kind), func(t *testing.T) {
			def := rowindex.Definition{Name: "r", Key: c.key, Kind: c.kind}
			lIdx, local, _, _ := build(t, filepath.Join(dir, "local", c.key, string(c.kind)), def)
			t0 := time.Now()
			sIdx, onSpark, st1, st2 := build(t, filepath.Join(dir, "spark", c.key, string(c.kind)), def, rowindex.WithEngine(eng, 2))
			took := time.Since(t0)
			if st1.EngineFilesRead+st2.EngineFilesRead != int64(len(uris)) || st1.EngineBytesRead+st2.EngineBytesRead != dataBytes {
				t.Errorf("Spark read %d files, %d bytes; the lake has %d files, %d bytes",
					st1.EngineFilesRead+st2.EngineFilesRead, st1.EngineBytesRead+st2.EngineBytesRead, len(uris), dataBytes)
			}
			if !reflect.DeepEqual(local.Files, onSpark.Files) || local.KeyClass != onSpark.KeyClass {
				t.Fatalf("data-file tables differ")
			}
			if len(local.Fragments) != len(onSpark.Fragments) || len(local.Fragments) == 0 {
				t.Fatalf("%d fragments locally, %d on Spark", len(local.Fragments), len(onSpark.Fragments))
			}
			for i := range local.Fragments {
				a, b := local.Fragments[i], onSpark.Fragments[i]
				if a.Entries != b.Entries || a.Size != b.Size || !reflect.DeepEqual(a.Groups, b.Groups) {
					t.Errorf("fragment %d: %d entries, %d bytes locally; %d, %d on Spark (or key directories differ)", i, a.Entries, a.Size, b.Entries, b.Size)
					continue
				}
				ab, err := store.ReadAll(ctx, lIdx, "row_indexes/r/"+a.Path)
				if err != nil {
					t.Fatal(err)
				}
				bb, err := store.ReadAll(ctx, sIdx, "row_indexes/r/"+b.Path)
				if err != nil {
					t.Fatal(err)
				}
				if string(ab) != string(bb) {
					t.Errorf("fragment %d: bytes differ", i)
				}
			}
			want := riLookups(t, ctx, lIdx, "r", res, keysOf[c.key], c.kind == rowindex.KindSorted)
			got := riLookups(t, ctx, sIdx, "r", res, keysOf[c.key], c.kind == rowindex.KindSorted)
			if d := diffLines(want, got); d != "" {
				t.Errorf("lookups differ (want local, got Spark):\n%s", d)
			}
			if len(want) < 2*len(keysOf[c.key]) {
				t.Errorf("%d lookup rows for %d keys: too few to compare", len(want), len(keysOf[c.key]))
			}
			t.Logf("%d entries, %d fragments identical, %d lookup rows equal; Spark builds %s (Spark read %d files, %d bytes)",
				local.Entries(), len(local.Fragments), len(want), took.Round(time.Millisecond), st1.EngineFilesRead+st2.EngineFilesRead, st1.EngineBytesRead+st2.EngineBytesRead)
		})
	}

	t.Run("face and cli", func(t *testing.T) {
		testSparkRowIndexFaceCLI(t, ctx, srv, dir, uris, res, keysOf)
	})

	t.Run("connection cut mid-build", func(t *testing.T) {
		def := rowindex.Definition{Name: "r", Key: "id", Kind: rowindex.KindHash}
		root := filepath.Join(dir, "cut")
		idx := openStore(t, ctx, root)
		if _, _, err := rowindex.Create(ctx, idx, def, res, uris[:2]); err != nil {
			t.Fatal(err)
		}
		before := snapshotDir(t, root)
		proxy := newFaultProxy(t, srv.Addr)
		peng, err := sparkengine.New(ctx, proxy.remote(), sparkengine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer peng.Close()
		logBefore, _ := os.ReadFile(srv.LogFile)
		started := strings.Count(string(logBefore), "ExecuteGrpcResponseSender: Starting for opId")
		done := make(chan error, 1)
		go func() {
			_, _, err := rowindex.Update(ctx, idx, def.Name, res, uris, rowindex.WithEngine(peng, 1))
			done <- err
		}()
		// Cut once the first request's runs query reached the server
		// (its second request, after the read).
		var cutAt int
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			log, _ := os.ReadFile(srv.LogFile)
			if cutAt = strings.Count(string(log), "ExecuteGrpcResponseSender: Starting for opId") - started; cutAt >= 2 {
				break
			}
		}
		proxy.cut()
		err = <-done
		var se *sparkengine.Error
		if !errors.As(err, &se) || se.Kind != sparkengine.KindConnection {
			t.Fatalf("build with the connection cut: %v (%T), want a *sparkengine.Error of kind connection", err, err)
		}
		t.Logf("cut after %d requests reached the server: %v", cutAt, err)
		after := snapshotDir(t, root)
		if !reflect.DeepEqual(before, after) {
			t.Errorf("index folder changed by the failed build: %d files before, %d after", len(before), len(after))
		}
		proxy.restore()
		man, _, err := rowindex.Update(ctx, idx, def.Name, res, uris, rowindex.WithEngine(peng, 1))
		if err != nil {
			t.Fatalf("rerun after the cut: %v", err)
		}
		if len(man.Files) != len(uris) {
			t.Fatalf("rerun indexed %d files, want %d", len(man.Files), len(uris))
		}
		ref := openStore(t, ctx, filepath.Join(dir, "cut-ref"))
		if _, _, err := rowindex.Create(ctx, ref, def, res, uris[:2]); err != nil {
			t.Fatal(err)
		}
		if _, _, err := rowindex.Update(ctx, ref, def.Name, res, uris); err != nil {
			t.Fatal(err)
		}
		want := riLookups(t, ctx, ref, "r", res, keysOf["id"], false)
		got := riLookups(t, ctx, idx, "r", res, keysOf["id"], false)
		if d := diffLines(want, got); d != "" {
			t.Errorf("lookups after the rerun differ from the local build's:\n%s", d)
		}
	})
}

// riSchema is the row index lake's Spark schema.
var riSchema = mustSchema(`{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"name","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"i32","type":"integer","nullable":true,"metadata":{}},` +
	`{"name":"day","type":"date","nullable":true,"metadata":{}},` +
	`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},` +
	`{"name":"d","type":"double","nullable":true,"metadata":{}},` +
	`{"name":"b","type":"binary","nullable":true,"metadata":{}},` +
	`{"name":"flag","type":"boolean","nullable":true,"metadata":{}},` +
	`{"name":"v","type":"long","nullable":false,"metadata":{}}]}`)

// testSparkRowIndexFaceCLI: Index.AddRowIndexWith with the spark engine
// (sorted, string key) and `add-row-index --engine spark --spark` (hash,
// integer key, --json reporting what Spark read) build row indexes over
// two files; an update on Spark (Index.UpdateWith) adds two more to them
// on Spark and to a covered row index locally; lookups equal a local
// build's over the four files. Covers on Spark are refused.
func testSparkRowIndexFaceCLI(t *testing.T, ctx context.Context, srv *ConnectServer, dir string, uris []string, res rowindex.Resolver, keysOf map[string][]any) {
	root := filepath.Join(dir, "fc")
	cat := index.NewCatalog(openStore(t, ctx, root), index.Options{})
	ix, err := cat.Open(ctx, "plays", index.OpenOptions{Schema: riSchema, Format: "parquet"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.AddFiles(ctx, uris[:2]...); err != nil {
		t.Fatal(err)
	}
	folder := store.Sub(ix.Root(), ix.Paths().Dir)
	local := openStore(t, ctx, filepath.Join(dir, "fc-local"))

	st, err := ariadne.Open(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	fx, err := st.Index(ctx, "plays")
	if err != nil {
		t.Fatal(err)
	}
	def := rowindex.Definition{Name: "by_name", Key: "name", Kind: rowindex.KindSorted}
	info, bs, err := fx.AddRowIndexWith(ctx, def, ariadne.AddRowIndexOptions{Engine: ariadne.EngineSpark, SparkRemote: srv.Remote()})
	st.Close()
	if err != nil {
		t.Fatalf("face: %v", err)
	}
	if info.Files != 2 || bs.EngineFilesRead != 2 {
		t.Errorf("face: %d files indexed, Spark read %d; want 2", info.Files, bs.EngineFilesRead)
	}

	var stdout, stderr bytes.Buffer
	code := cli.Main(ctx, []string{"--store", "file://" + root, "add-row-index", "plays", "--key", "id", "--name", "by_id", "--engine", "spark", "--spark", srv.Remote(), "--json"},
		cli.Env{Stdout: &stdout, Stderr: &stderr})
	if code != 0 {
		t.Fatalf("cli add-row-index: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), `"files_read": 2`) || !strings.Contains(stdout.String(), `"name": "spark"`) {
		t.Errorf("cli add-row-index --json: %s, want engine spark with files_read 2", stdout.String())
	}
	// A locally built row index with a cover column: update --engine
	// spark keeps it current here, the others on Spark.
	code = cli.Main(ctx, []string{"--store", "file://" + root, "add-row-index", "plays", "--key", "id", "--name", "cov", "--cover", "v"},
		cli.Env{Stdout: &stdout, Stderr: &stderr})
	if code != 0 {
		t.Fatalf("cli add-row-index --cover: exit %d: %s", code, stderr.String())
	}

	// The other two files, by an update on Spark through the face (row
	// indexes) and, for the by_id row index, compared below.
	if _, err := ix.AddFiles(ctx, uris[2:]...); err != nil {
		t.Fatal(err)
	}
	st, err = ariadne.Open(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	if fx, err = st.Index(ctx, "plays"); err != nil {
		t.Fatal(err)
	}
	ur, err := fx.UpdateWith(ctx, ariadne.UpdateOptions{Engine: ariadne.EngineSpark, SparkRemote: srv.Remote()})
	st.Close()
	if err != nil {
		t.Fatalf("face update on Spark: %v", err)
	}
	for name, want := range map[string]int64{"by_name": 2, "by_id": 2, "cov": 0} {
		if got := ur.RowIndexes[name]; got.Files != 2 || got.EngineFilesRead != want {
			t.Errorf("update on Spark, row index %s: %d files indexed, %d read by Spark; want 2, %d", name, got.Files, got.EngineFilesRead, want)
		}
	}
	for _, d := range []rowindex.Definition{{Name: "by_name", Key: "name", Kind: rowindex.KindSorted}, {Name: "by_id", Key: "id", Kind: rowindex.KindHash}} {
		if _, _, err := rowindex.Create(ctx, local, d, res, uris); err != nil {
			t.Fatal(err)
		}
		if diff := diffLines(riLookups(t, ctx, local, d.Name, res, keysOf[d.Key], d.Kind == rowindex.KindSorted),
			riLookups(t, ctx, folder, d.Name, res, keysOf[d.Key], d.Kind == rowindex.KindSorted)); diff != "" {
			t.Errorf("%s: lookups differ (want local, got Spark):\n%s", d.Name, diff)
		}
	}
	// Covers are built here only: refused on Spark with a message.
	stdout.Reset()
	stderr.Reset()
	code = cli.Main(ctx, []string{"--store", "file://" + root, "add-row-index", "plays", "--key", "id", "--name", "cov2", "--cover", "v", "--engine", "spark", "--spark", srv.Remote()},
		cli.Env{Stdout: &stdout, Stderr: &stderr})
	if code == 0 || !strings.Contains(stderr.String(), "cover columns and aggregates are not built on the spark engine") {
		t.Errorf("cli add-row-index --cover --engine spark: exit %d, %s", code, stderr.String())
	}
}
