package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/cli"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/sparkengine"
	"github.com/ariadne-go/ariadne/store"
)

// The Spark engine's lake: 6 files per format, 4 rows each; users repeat
// across files (temporal deduplication has work to do), one user is null,
// one row has an empty tags array and one a null one.
const engineFiles, engineRowsPerFile = 6, 4

var engineSchemaFull = mustSchema(`{"type":"struct","fields":[` +
	`{"name":"id","type":"long","nullable":true,"metadata":{}},` +
	`{"name":"user","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},` +
	`{"name":"score","type":"double","nullable":true,"metadata":{}},` +
	`{"name":"tags","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"name","type":"string","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}}]}`)

// engineSchemaCSV is the CSV files' schema: no array column.
var engineSchemaCSV = &schema.Struct{Fields: engineSchemaFull.Fields[:4]}

func engineRow(f, r int) []any {
	i := f*engineRowsPerFile + r
	var user any = fmt.Sprintf("u%d", (f+r)%7)
	if i == 5 {
		user = nil
	}
	var tags any = []any{[]any{fmt.Sprintf("t%d", r%3)}, []any{fmt.Sprintf("t%d", (r+f)%5)}}
	switch i {
	case 6:
		tags = []any{}
	case 9:
		tags = nil
	}
	return []any{int64(f*10 + r), user, time.Date(2024, 1, 1, i%5, i, 0, 0, time.UTC), float64(i) * 1.5, tags}
}

// writeEngineLake writes the lake in parquet, csv and json under dir and
// returns the file paths per format.
func writeEngineLake(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, format := range []string{"parquet", "csv", "json"} {
		sub := filepath.Join(dir, format)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range engineFiles {
			p := filepath.Join(sub, fmt.Sprintf("part-%d.%s", f, format))
			var b strings.Builder
			var rows [][]any
			for r := range engineRowsPerFile {
				rows = append(rows, engineRow(f, r))
			}
			switch format {
			case "parquet":
				fh, err := os.Create(p)
				if err != nil {
					t.Fatal(err)
				}
				w := pqrow.NewWriter(fh, engineSchemaFull, pqrow.WriterOptions{})
				if err := w.Write(rows...); err != nil {
					t.Fatal(err)
				}
				if _, err := w.Close(); err != nil {
					t.Fatal(err)
				}
				fh.Close()
				out[format] = append(out[format], p)
				continue
			case "csv":
				b.WriteString("id,user,ts,score\n")
				for _, r := range rows {
					user := ""
					if r[1] != nil {
						user = r[1].(string)
					}
					fmt.Fprintf(&b, "%d,%s,%s,%v\n", r[0], user, r[2].(time.Time).Format("2006-01-02T15:04:05Z"), r[3])
				}
			case "json":
				for _, r := range rows {
					user := "null"
					if r[1] != nil {
						user = `"` + r[1].(string) + `"`
					}
					tags := "null"
					if r[4] != nil {
						var ts []string
						for _, e := range r[4].([]any) {
							ts = append(ts, `{"name":"`+e.([]any)[0].(string)+`"}`)
						}
						tags = "[" + strings.Join(ts, ",") + "]"
					}
					fmt.Fprintf(&b, `{"id":%d,"user":%s,"ts":"%s","score":%v,"tags":%s}`+"\n", r[0], user, r[2].(time.Time).Format("2006-01-02T15:04:05Z"), r[3], tags)
				}
			}
			if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			out[format] = append(out[format], p)
		}
	}
	return out
}

// engineIndex is one index of the engine test and the joins run on it.
type engineIndex struct {
	name, format string
	setup        func(ctx context.Context, ix *index.Index) error
	large        bool // LargeIndexLimit 2: value sets go to the large-index table
	on           []string
}

var engineIndexes = []engineIndex{
	{name: "pq_all", format: "parquet", on: []string{"user", "id", "score", "up", "tag"},
		setup: func(ctx context.Context, ix *index.Index) error {
			return errors.Join(ix.AddIndex(ctx, "user"), ix.AddBloomIndex(ctx, "id", 0.01), ix.AddRangeIndex(ctx, "score"),
				ix.AddComputedIndex(ctx, "up", "upper(user)"), ix.AddExplodedFieldIndex(ctx, "tags", "name", "tag"))
		}},
	{name: "pq_temporal", format: "parquet", on: []string{"user"},
		setup: func(ctx context.Context, ix *index.Index) error { return ix.AddTemporalIndex(ctx, "user", "ts") }},
	{name: "pq_large", format: "parquet", large: true, on: []string{"id"},
		setup: func(ctx context.Context, ix *index.Index) error { return ix.AddIndex(ctx, "id") }},
	{name: "csv_all", format: "csv", on: []string{"user", "id"},
		setup: func(ctx context.Context, ix *index.Index) error {
			return errors.Join(ix.AddIndex(ctx, "user"), ix.AddBloomIndex(ctx, "id", 0.01), ix.AddRangeIndex(ctx, "score"))
		}},
	{name: "json_all", format: "json", on: []string{"user", "tag"},
		setup: func(ctx context.Context, ix *index.Index) error {
			return errors.Join(ix.AddTemporalIndex(ctx, "user", "ts"), ix.AddExplodedFieldIndex(ctx, "tags", "name", "tag"))
		}},
}

// engineKeys are the keys per join column: some present in a few files,
// one absent, and a null.
func engineKeys(col string) fileindex.KeySource {
	var typ schema.Type
	var vals []any
	switch col {
	case "user":
		typ, vals = schema.String, []any{"u1", "u4", "nobody", nil}
	case "id":
		typ, vals = schema.Long, []any{int64(1), int64(12), int64(53), int64(999)}
	case "score":
		typ, vals = schema.Double, []any{1.5, 12.0, 1000.0}
	case "up":
		typ, vals = schema.String, []any{"U2", "U6", "NOPE"}
	case "tag":
		typ, vals = schema.String, []any{"t1", "t4", "zz"}
	}
	st := &schema.Struct{Fields: []schema.Field{{Name: col, Type: typ, Nullable: true}, {Name: "note", Type: schema.String, Nullable: true}}}
	var rows [][]any
	for i, v := range vals {
		rows = append(rows, []any{v, fmt.Sprintf("k%d", i)})
	}
	return fileindex.RowsSource(st, rows)
}

// joinResult is a drained join.
type joinResult struct {
	schema *schema.Struct
	lines  []string
	stats  fileindex.JoinStats
	files  []string
}

func runJoin(ctx context.Context, fi *fileindex.FileIndex, col string, how fileindex.JoinType, opts fileindex.JoinOptions) (joinResult, error) {
	res, err := fi.Join(ctx, engineKeys(col), []string{col}, how, opts)
	if err != nil {
		return joinResult{}, err
	}
	defer res.Close()
	var rows [][]any
	for {
		b, err := res.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return joinResult{}, err
		}
		rows = append(rows, b...)
	}
	lines, err := RenderRows(res.Schema(), rows)
	if err != nil {
		return joinResult{}, err
	}
	return joinResult{schema: res.Schema(), lines: lines, stats: res.Stats(), files: res.Files()}, nil
}

// typesOf renders a schema's names and types (nullability aside: DuckDB
// reports every result column nullable).
func typesOf(st *schema.Struct) string {
	var parts []string
	for _, f := range st.Fields {
		parts = append(parts, f.Name+" "+schema.MarshalType(stripMetadata(f.Type)))
	}
	return strings.Join(parts, ", ")
}

// buildEngineIndexes creates and updates every index of engineIndexes over
// the lake.
func buildEngineIndexes(t *testing.T, ctx context.Context, root string, lake map[string][]string) map[string]*fileindex.FileIndex {
	t.Helper()
	cat := index.NewCatalog(openStore(t, ctx, root), index.Options{})
	out := map[string]*fileindex.FileIndex{}
	for _, d := range engineIndexes {
		st, ro := engineSchemaFull, map[string]string(nil)
		switch d.format {
		case "csv":
			st, ro = engineSchemaCSV, map[string]string{"header": "true"}
		}
		ix, err := cat.Open(ctx, d.name, index.OpenOptions{Schema: st, Format: d.format, ReadOptions: ro})
		if err != nil {
			t.Fatalf("open %s: %v", d.name, err)
		}
		if err := d.setup(ctx, ix); err != nil {
			t.Fatalf("%s: %v", d.name, err)
		}
		uris, err := ix.ExpandFiles(ctx, lake[d.format])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.AddFiles(ctx, uris...); err != nil {
			t.Fatal(err)
		}
		opts := fileindex.Options{}
		if d.large {
			cfg := config.Defaults()
			cfg.LargeIndexLimit = 2
			opts.Config = &cfg
		}
		fi := fileindex.New(ix, opts)
		if _, err := fi.Update(ctx, fileindex.UpdateOptions{}); err != nil {
			t.Fatalf("update %s: %v", d.name, err)
		}
		out[d.name] = fi
	}
	return out
}

// snapshotDir returns every file under dir with its content, to prove an
// index folder unchanged.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSparkEngineJoin is issue 14 items 1–2 for joins: for every index type
// (regular, bloom, range, computed, exploded, temporal, large) over
// parquet, csv and json files, and every join type, a join run on Spark
// through Spark Connect gives exactly the DuckDB engine's rows and schema,
// locates the same files, and Spark's scans read exactly the located files.
// Then Spark-side failures: a located file Spark cannot read (an executor
// error), a timeout, and a server killed in the middle of a join each fail
// with a typed *sparkengine.Error, leave the index folder byte for byte as
// it was, and a retry on a live server completes with the same rows.
func TestSparkEngineJoin(t *testing.T) {
	e := loadEnv(t)
	ctx := testContext(t, 20*time.Minute)
	dir := t.TempDir()
	lake := writeEngineLake(t, filepath.Join(dir, "lake"))
	root := filepath.Join(dir, "root")
	fis := buildEngineIndexes(t, ctx, root, lake)

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

	t.Run("matrix", func(t *testing.T) {
		hows := []fileindex.JoinType{fileindex.Inner, fileindex.Left, fileindex.Right, fileindex.Full, fileindex.Semi, fileindex.Anti}
		joins, readOnlyLocated := 0, 0
		for _, d := range engineIndexes {
			fi := fis[d.name]
			for _, col := range d.on {
				for _, how := range hows {
					for _, left := range []bool{false, true} {
						if left && (d.name != "pq_all" || col != "user" || (how != fileindex.Inner && how != fileindex.Left)) {
							continue // index on the left: one column, two types suffice
						}
						name := fmt.Sprintf("%s/%s/%s/indexLeft=%v", d.name, col, how, left)
						want, err := runJoin(ctx, fi, col, how, fileindex.JoinOptions{IndexOnLeft: left})
						if err != nil {
							t.Fatalf("%s: duckdb: %v", name, err)
						}
						got, err := runJoin(ctx, fi, col, how, fileindex.JoinOptions{IndexOnLeft: left, Engine: eng})
						if err != nil {
							t.Fatalf("%s: spark: %v\n--- server log (tail) ---\n%s", name, err, srv.logTail())
						}
						joins++
						if typesOf(got.schema) != typesOf(want.schema) {
							t.Errorf("%s: schema\nspark:  %s\nduckdb: %s", name, typesOf(got.schema), typesOf(want.schema))
						}
						if d := diffLines(want.lines, got.lines); d != "" {
							t.Errorf("%s: rows differ (want duckdb, got spark):\n%s", name, d)
						}
						if !slices.Equal(got.files, want.files) {
							t.Errorf("%s: located %v with spark, %v with duckdb", name, got.files, want.files)
						}
						if got.stats.Engine != "spark" || got.stats.Path != fileindex.PathEngine {
							t.Errorf("%s: stats %+v, want engine spark, path engine", name, got.stats)
						}
						// Spark read exactly the located files, no more.
						if got.stats.EngineFilesRead != int64(len(got.files)) {
							t.Errorf("%s: Spark read %d files, %d located", name, got.stats.EngineFilesRead, len(got.files))
						}
						if len(got.files) < engineFiles {
							readOnlyLocated++
						}
						if len(want.lines) == 0 && how == fileindex.Inner {
							t.Errorf("%s: no rows: the keys should match", name)
						}
					}
				}
			}
		}
		t.Logf("%d joins identical on Spark and DuckDB; %d read fewer files than the lake holds", joins, readOnlyLocated)
		if readOnlyLocated == 0 {
			t.Error("no join located a strict subset of the files: the test proves nothing about pruning")
		}

	})

	before := snapshotDir(t, root)
	pq := fis["pq_all"]

	t.Run("face cli and output", func(t *testing.T) {
		testSparkFaceAndCLI(t, ctx, srv, root, dir, pq)
	})

	t.Run("delta output", func(t *testing.T) {
		testSparkDeltaOutput(t, ctx, e, srv, eng, root, dir, pq)
	})

	t.Run("timeout", func(t *testing.T) {
		short, err := sparkengine.New(ctx, srv.Remote(), sparkengine.Options{Timeout: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer short.Close()
		_, err = runJoin(ctx, pq, "user", fileindex.Inner, fileindex.JoinOptions{Engine: short})
		var se *sparkengine.Error
		if !errors.As(err, &se) || se.Kind != sparkengine.KindTimeout || !errors.Is(err, sparkengine.ErrSpark) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("join with a 1 ms timeout: %v (%T), want a *sparkengine.Error of kind timeout", err, err)
		}
		t.Logf("timeout: %v", err)
	})

	t.Run("unreachable", func(t *testing.T) {
		gone, err := sparkengine.New(ctx, "sc://127.0.0.1:1", sparkengine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer gone.Close()
		_, err = runJoin(ctx, pq, "user", fileindex.Inner, fileindex.JoinOptions{Engine: gone})
		var se *sparkengine.Error
		if !errors.As(err, &se) || se.Kind != sparkengine.KindConnection {
			t.Fatalf("join on a closed port: %v, want a *sparkengine.Error of kind connection", err)
		}
		t.Logf("unreachable: %v", err)
	})

	t.Run("executor error", func(t *testing.T) {
		// A located file replaced by bytes that are not Parquet: Spark's
		// task fails reading it.
		victim := lake["parquet"][0]
		orig, err := os.ReadFile(victim)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(victim, []byte(strings.Repeat("not parquet ", 100)), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(victim, orig, 0o644)
		_, err = runJoin(ctx, pq, "id", fileindex.Inner, fileindex.JoinOptions{Engine: eng})
		var se *sparkengine.Error
		if !errors.As(err, &se) || se.Kind != sparkengine.KindExecution {
			t.Fatalf("join over a corrupt located file: %v, want a *sparkengine.Error of kind execution", err)
		}
		t.Logf("executor error: %v", err)
	})

	t.Run("server killed", func(t *testing.T) {
		dir2 := t.TempDir()
		srv2, err := e.StartConnectServer(ctx, ConnectOptions{LogFile: filepath.Join(dir2, "connect-server.log")})
		if err != nil {
			t.Fatal(err)
		}
		defer srv2.Stop()
		eng2, err := sparkengine.New(ctx, srv2.Remote(), sparkengine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer eng2.Close()
		// The kill lands once the join's query (its third request, after
		// the keys and the read) reached the server: the first query of a
		// fresh server takes seconds on this machine (code generation).
		done := make(chan error, 1)
		go func() {
			_, err := runJoin(ctx, pq, "tag", fileindex.Full, fileindex.JoinOptions{Engine: eng2})
			done <- err
		}()
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			log, _ := os.ReadFile(srv2.LogFile)
			if strings.Count(string(log), "ExecuteGrpcResponseSender: Starting for opId") >= 3 {
				break
			}
		}
		srv2.kill(9)
		err = <-done
		var se *sparkengine.Error
		if !errors.As(err, &se) || se.Kind != sparkengine.KindConnection {
			t.Fatalf("join while the server was killed: %v, want a *sparkengine.Error of kind connection", err)
		}
		t.Logf("killed during %q: %v", se.Op, err)
		// A retry on a live server completes with DuckDB's rows.
		want, err := runJoin(ctx, pq, "tag", fileindex.Full, fileindex.JoinOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := runJoin(ctx, pq, "tag", fileindex.Full, fileindex.JoinOptions{Engine: eng})
		if err != nil {
			t.Fatalf("retry: %v", err)
		}
		if d := diffLines(want.lines, got.lines); d != "" {
			t.Errorf("retry: rows differ:\n%s", d)
		}
	})

	after := snapshotDir(t, root)
	if len(after) != len(before) {
		t.Errorf("index folder: %d files before the failures, %d after", len(before), len(after))
	}
	for p, b := range before {
		if after[p] != b {
			t.Errorf("index file %s changed by a failed Spark join", p)
		}
	}
}

// testSparkFaceAndCLI: the library face (ariadne.Index.Join with Engine
// "spark", and with the config keys engine/sparkRemote) and the command
// line (join --engine spark --spark URL) give DuckDB's rows; with Output
// (--spark-out) Spark writes them as Parquet, which reads back as the same
// rows; an existing folder is refused by default, mode append adds the rows
// again and overwrite replaces them.
func testSparkFaceAndCLI(t *testing.T, ctx context.Context, srv *ConnectServer, root, dir string, pq *fileindex.FileIndex) {
	want, err := runJoin(ctx, pq, "tag", fileindex.Left, fileindex.JoinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The face, engine by option and by configuration, against the face
	// on DuckDB (rows in the face's value model).
	faceRows := func(st *ariadne.Store, req ariadne.JoinRequest) ([]string, ariadne.JoinStats, error) {
		ix, err := st.Index(ctx, "pq_all")
		if err != nil {
			return nil, ariadne.JoinStats{}, err
		}
		req.Source, req.On, req.How = engineKeys("tag"), []string{"tag"}, "left"
		rows, err := ix.Join(ctx, req)
		if err != nil {
			return nil, ariadne.JoinStats{}, err
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			out = append(out, fmt.Sprint(rows.Values()))
		}
		slices.Sort(out)
		return out, rows.Stats(), rows.Err()
	}
	plain, err := ariadne.Open(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	faceWant, _, err := faceRows(plain, ariadne.JoinRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(faceWant) != len(want.lines) {
		t.Fatalf("face on DuckDB: %d rows, fileindex: %d", len(faceWant), len(want.lines))
	}
	cfg := config.Defaults()
	cfg.Engine, cfg.SparkRemote = "spark", srv.Remote()
	configured, err := ariadne.Open(ctx, "file://"+root, ariadne.WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer configured.Close()
	for _, tc := range []struct {
		name string
		st   *ariadne.Store
		req  ariadne.JoinRequest
	}{
		{"option", plain, ariadne.JoinRequest{Engine: ariadne.EngineSpark, SparkRemote: srv.Remote()}},
		{"config", configured, ariadne.JoinRequest{}},
	} {
		got, stats, err := faceRows(tc.st, tc.req)
		if err != nil {
			t.Fatalf("face (%s): %v", tc.name, err)
		}
		if stats.Engine != "spark" || stats.EngineFilesRead != int64(stats.FilesLocated) {
			t.Errorf("face (%s): stats %+v, want engine spark reading the located files", tc.name, stats)
		}
		if d := diffLines(faceWant, got); d != "" {
			t.Errorf("face (%s): rows differ from DuckDB's:\n%s", tc.name, d)
		}
	}

	// Output written by Spark, read back by our Parquet reader.
	outDir := filepath.Join(dir, "spark-out")
	outReq := ariadne.JoinRequest{Engine: ariadne.EngineSpark, SparkRemote: srv.Remote(), Output: "file://" + outDir}
	if got, _, err := faceRows(plain, outReq); err != nil || len(got) != 0 {
		t.Fatalf("output: %d rows streamed back, %v; want none, no error", len(got), err)
	}
	r := store.NewResolver(store.ResolverOptions{})
	defer r.Close()
	// readOut reads every Parquet file under outDir; copies is how many
	// times DuckDB's rows must be there.
	readOut := func(copies int) {
		t.Helper()
		parts, _ := filepath.Glob(filepath.Join(outDir, "*.parquet"))
		if len(parts) == 0 {
			t.Fatalf("output: no Parquet file under %s", outDir)
		}
		var rows [][]any
		for _, p := range parts {
			rd, err := datafile.Open(ctx, r, "file://"+p, datafile.Spec{Format: "parquet", Schema: want.schema}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for {
				b, err := rd.Next(ctx)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				rows = append(rows, b...)
			}
			rd.Close()
		}
		got, err := RenderRows(want.schema, rows)
		if err != nil {
			t.Fatal(err)
		}
		var wl []string
		for range copies {
			wl = append(wl, want.lines...)
		}
		slices.Sort(wl)
		slices.Sort(got)
		if d := diffLines(wl, got); d != "" {
			t.Errorf("output written by Spark differs from DuckDB's rows ×%d:\n%s", copies, d)
		}
	}
	readOut(1)
	// An existing output folder fails the join before Spark runs (mode
	// error, the default), as an invalid argument.
	_, _, err = faceRows(plain, outReq)
	if ariadne.ErrorKind(err) != "invalid argument" || !strings.Contains(fmt.Sprint(err), "already exists") {
		t.Errorf("output into an existing folder: %v (kind %q), want an invalid argument", err, ariadne.ErrorKind(err))
	}
	// Mode append adds Spark's files beside the first ones (Parquet
	// inferred: the folder is no Delta table); overwrite replaces them.
	outReq.OutputMode = "append"
	if _, stats, err := faceRows(plain, outReq); err != nil || stats.OutputFormat != "parquet" {
		t.Fatalf("append: %+v, %v", stats, err)
	}
	readOut(2)
	outReq.OutputMode = "overwrite"
	if _, _, err := faceRows(plain, outReq); err != nil {
		t.Fatalf("overwrite: %v", err)
	}
	readOut(1)

	// The command line.
	keysFile := filepath.Join(dir, "keys.csv")
	if err := os.WriteFile(keysFile, []byte("user,note\nu1,a\nu4,b\nnobody,c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := cli.Main(ctx, append([]string{"--store", "file://" + root}, args...), cli.Env{Stdout: &stdout, Stderr: &stderr})
		if code != 0 {
			t.Fatalf("ariadne %v: exit %d: %s", args, code, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	duckOut, _ := run("join", "pq_all", "--keys", keysFile, "--on", "user", "--json")
	sparkOut, sparkErr := run("join", "pq_all", "--keys", keysFile, "--on", "user", "--json", "--engine", "spark", "--spark", srv.Remote())
	sortLines := func(s string) []string {
		l := strings.Split(strings.TrimSpace(s), "\n")
		slices.Sort(l)
		return l
	}
	if d := diffLines(sortLines(duckOut), sortLines(sparkOut)); d != "" {
		t.Errorf("cli: --engine spark output differs from duckdb's:\n%s", d)
	}
	// With --json, stderr carries one JSON event line per message; the
	// join's summary says what Spark read.
	var summary struct {
		Event           string `json:"event"`
		Engine          string `json:"engine"`
		Rows            int    `json:"rows"`
		FilesLocated    int    `json:"files_located"`
		EngineFilesRead int    `json:"engine_files_read"`
	}
	for _, line := range strings.Split(strings.TrimSpace(sparkErr), "\n") {
		if err := json.Unmarshal([]byte(line), &summary); err != nil {
			t.Errorf("cli: stderr line %q is not JSON: %v", line, err)
		}
		if summary.Event == "summary" {
			break
		}
	}
	if summary.Event != "summary" || summary.Engine != "spark" || summary.EngineFilesRead == 0 ||
		summary.EngineFilesRead > summary.FilesLocated || summary.Rows != strings.Count(sparkOut, "\n") ||
		strings.Count(duckOut, "\n") == 0 {
		t.Errorf("cli: stderr %q, stdout %q", sparkErr, duckOut)
	}
	t.Logf("cli: %s", strings.TrimSpace(sparkErr))
	cliOut := filepath.Join(dir, "cli-out")
	_, outErr := run("join", "pq_all", "--keys", keysFile, "--on", "user", "--set", "engine=spark", "--set", "sparkRemote="+srv.Remote(), "--spark-out", cliOut)
	if parts, _ := filepath.Glob(filepath.Join(cliOut, "*.parquet")); len(parts) == 0 || !strings.Contains(outErr, "written by Spark") {
		t.Errorf("cli --spark-out: %d Parquet files, stderr %q", len(parts), outErr)
	}
}
