package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/bench/fileindexbench"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/sparkengine"
	"github.com/ariadne-go/ariadne/store"
)

// TestSparkEngineBench is issue 14's benchmark (docs/spark-engine.md): on
// the generated listening lake (parquet, arrival layout, regular index on
// user_id), inner joins of K users run on embedded DuckDB and on Spark
// through Spark Connect in the same run, alternating, on the same keys;
// each reports its median time, and Spark its scans' files and bytes read,
// which must be exactly the located files and their sizes: only located
// files are read. Rows must be equal. Then updates: a fresh index over
// the whole lake per run, its summaries by the embedded path and by Spark
// (fileindex.UpdateOptions.Summaries), alternating, with wall and CPU
// times; both must persist the same index. The lake is small by default (8 MB,
// so the harness stays quick); ARIADNE_SPARK_BENCH_MB sets its size for the
// measurements in the docs.
func TestSparkEngineBench(t *testing.T) {
	e := loadEnv(t)
	// ARIADNE_SPARK_BENCH_OUT names a file that receives the report too
	// (interop/run.sh prints a passing test's log only on failure).
	logf := t.Logf
	if p := os.Getenv("ARIADNE_SPARK_BENCH_OUT"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		logf = func(format string, args ...any) {
			t.Logf(format, args...)
			fmt.Fprintf(f, format+"\n", args...)
		}
	}
	ctx := testContext(t, 40*time.Minute)
	mb := int64(8)
	if v := os.Getenv("ARIADNE_SPARK_BENCH_MB"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			t.Fatalf("ARIADNE_SPARK_BENCH_MB=%q: want a positive number of MB", v)
		}
		mb = n
	}
	dir := t.TempDir()
	lake := filepath.Join(dir, "lake")
	// The bucketed layout (Spark's bucketBy(4, user_id) per day): a user's
	// plays of a day are in one file of the day's four.
	cfg := lakegen.Config{TargetBytes: mb << 20, Days: 8, FilesPerDay: 4, Users: 200_000, Sorted: true}
	files, err := lakegen.Generate(ctx, openStore(t, ctx, mustMkdir(t, lake)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	size := map[string]int64{}
	var lakeBytes int64
	for _, f := range files {
		u := "file://" + filepath.Join(lake, filepath.FromSlash(f.Key))
		uris = append(uris, u)
		size[u] = f.Size
		lakeBytes += f.Size
	}
	src, err := schema.Parse(fileindexbench.LakeSchema)
	if err != nil {
		t.Fatal(err)
	}
	cat := index.NewCatalog(openStore(t, ctx, mustMkdir(t, filepath.Join(dir, "root"))), index.Options{})
	ix, err := cat.Open(ctx, "listens", index.OpenOptions{Schema: src, Format: "parquet"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.AddFiles(ctx, uris...); err != nil {
		t.Fatal(err)
	}
	if err := ix.AddIndex(ctx, "user_id"); err != nil {
		t.Fatal(err)
	}
	fi := fileindex.New(ix, fileindex.Options{})
	t0 := time.Now()
	if _, err := fi.Update(ctx, fileindex.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	logf("lake: %d files, %.1f MB; update (Go/DuckDB) %v", len(files), float64(lakeBytes)/1e6, time.Since(t0).Round(time.Millisecond))

	// Spark's event log: what the scans read (the file scans' "number of
	// files read" and "size of files read") for requests that return no
	// metrics (Spark 3.5 sends none with a command, such as a write).
	events := mustMkdir(t, filepath.Join(dir, "events"))
	srv, err := e.StartConnectServer(ctx, ConnectOptions{LogFile: filepath.Join(dir, "connect-server.log"),
		Conf: map[string]string{"spark.eventLog.enabled": "true", "spark.eventLog.dir": "file://" + events}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	eng, err := sparkengine.New(ctx, srv.Remote(), sparkengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()

	keySchema := &schema.Struct{Fields: []schema.Field{{Name: "user_id", Type: schema.Long, Nullable: true}}}
	join := func(n int, engine fileindex.Engine) (time.Duration, int, fileindex.JoinStats, []string, error) {
		rows := make([][]any, n)
		for i := range rows {
			// Users of low activity (ranks 100,000 on, spread): a few
			// plays each, in a few files.
			rows[i] = []any{lakegen.UserID(uint64(100_000 + i*37))}
		}
		t0 := time.Now()
		res, err := fi.Join(ctx, fileindex.RowsSource(keySchema, rows), []string{"user_id"}, fileindex.Inner, fileindex.JoinOptions{Engine: engine})
		if err != nil {
			return 0, 0, fileindex.JoinStats{}, nil, err
		}
		defer res.Close()
		count := 0
		for {
			b, err := res.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return 0, 0, fileindex.JoinStats{}, nil, err
			}
			count += len(b)
		}
		return time.Since(t0), count, res.Stats(), res.Files(), nil
	}
	// ARIADNE_SPARK_BENCH_PARTS lists the parts to measure (joins, update,
	// rowindex; comma-separated, default all).
	parts := os.Getenv("ARIADNE_SPARK_BENCH_PARTS")
	part := func(p string) bool { return parts == "" || slices.Contains(strings.Split(parts, ","), p) }
	joins := part("joins")
	// Warm both engines (Spark's first query generates code for seconds).
	if _, _, _, _, err := join(1, eng); err != nil {
		t.Fatalf("spark warm-up: %v\n%s", err, srv.logTail())
	}
	const runs = 3
	for _, k := range []int{1, 10, 100, 1000} {
		if !joins {
			break
		}
		if k == 1 {
			logf("%6s %8s %9s %10s %12s %12s %10s %10s %8s", "keys", "rows", "located", "loc MB", "spark files", "spark MB", "duckdb", "spark", "load")
		}
		var dts, sts []time.Duration
		var drows, srows int
		var st fileindex.JoinStats
		var located []string
		for range runs {
			d, n, _, _, err := join(k, nil)
			if err != nil {
				t.Fatal(err)
			}
			dts, drows = append(dts, d), n
			s, n, stats, files, err := join(k, eng)
			if err != nil {
				t.Fatalf("spark: %v\n%s", err, srv.logTail())
			}
			sts, srows, st, located = append(sts, s), n, stats, files
		}
		if drows != srows {
			t.Errorf("%d keys: %d rows with DuckDB, %d with Spark", k, drows, srows)
		}
		var locBytes int64
		for _, f := range located {
			locBytes += size[f]
		}
		// Only located files were read, and all of each.
		if st.EngineFilesRead != int64(len(located)) || st.EngineBytesRead != locBytes {
			t.Errorf("%d keys: Spark read %d files, %d bytes; located %d files, %d bytes", k, st.EngineFilesRead, st.EngineBytesRead, len(located), locBytes)
		}
		logf("%6d %8d %5d/%-3d %10.2f %12d %12.2f %10v %10v %8s", k, drows, len(located), len(files), float64(locBytes)/1e6,
			st.EngineFilesRead, float64(st.EngineBytesRead)/1e6, median(dts).Round(time.Millisecond), median(sts).Round(time.Millisecond), loadAvg())
	}

	// Updates: a fresh index over the whole lake (regular user_id, bloom
	// track_uri, range ts) per run, its summaries computed by the embedded
	// path or by Spark, alternating; both must persist the same index. CPU:
	// this process's (user+sys) and the Spark JVM's, during the update.
	jvm := srv.cmd.Process.Pid
	update := func(run int, sum fileindex.SummaryEngine, tables bool, batch int) (wall, self, spark time.Duration, content []string, read scanRead) {
		root := mustMkdir(t, filepath.Join(dir, fmt.Sprintf("upd-%d-%v-%v-%d", run, sum != nil, tables, batch)))
		ucat := index.NewCatalog(openStore(t, ctx, root), index.Options{})
		uix, err := ucat.Open(ctx, "listens", index.OpenOptions{Schema: src, Format: "parquet"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := uix.AddFiles(ctx, uris...); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(uix.AddIndex(ctx, "user_id"), uix.AddBloomIndex(ctx, "track_uri", 0.01), uix.AddRangeIndex(ctx, "ts")); err != nil {
			t.Fatal(err)
		}
		ufi := fileindex.New(uix, fileindex.Options{})
		r0 := eventLogScans(t, events)
		s0, j0 := selfCPU(), procCPU(jvm)
		t0 := time.Now()
		if _, err := ufi.Update(ctx, fileindex.UpdateOptions{Summaries: sum, SummaryTables: tables, SummaryBatchFiles: batch}); err != nil {
			t.Fatalf("update (spark %v, tables %v): %v\n%s", sum != nil, tables, err, srv.logTail())
		}
		wall = time.Since(t0)
		self, spark = selfCPU()-s0, procCPU(jvm)-j0
		r1 := eventLogScans(t, events)
		return wall, self, spark, indexContent(t, ctx, uix), scanRead{r1.files - r0.files, r1.bytes - r0.bytes}
	}
	if part("rowindex") {
		benchRowIndex(t, ctx, dir, uris, lakeBytes, eng, jvm, logf)
	}
	if !part("update") {
		return
	}
	// ARIADNE_SPARK_BENCH_UPDATE_RUNS: runs of each update (default 3).
	uruns := runs
	if v := os.Getenv("ARIADNE_SPARK_BENCH_UPDATE_RUNS"); v != "" {
		if uruns, err = strconv.Atoi(v); err != nil || uruns <= 0 {
			t.Fatalf("ARIADNE_SPARK_BENCH_UPDATE_RUNS=%q: want a positive number", v)
		}
	}
	// The embedded path, Spark streaming the summaries back (Arrow), Spark
	// writing them as Delta tables in the index's folder; alternating.
	type variant struct {
		name            string
		sum             fileindex.SummaryEngine
		tables          bool
		batch           int
		wall, self, jvm []time.Duration
		content         []string
		read            scanRead
	}
	variants := []*variant{{name: "embedded"}, {name: "spark, streamed", sum: eng}, {name: "spark, delta tables", sum: eng, tables: true}}
	// ARIADNE_SPARK_BENCH_TABLES_BATCH adds the tables path with that many
	// files per request (its records do not pass through Spark's driver).
	if v := os.Getenv("ARIADNE_SPARK_BENCH_TABLES_BATCH"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("ARIADNE_SPARK_BENCH_TABLES_BATCH=%q: want a positive number", v)
		}
		variants = append(variants, &variant{name: fmt.Sprintf("spark, tables, %d/req", n), sum: eng, tables: true, batch: n})
	}
	for run := range uruns {
		for _, v := range variants {
			w, c, j, content, read := update(run, v.sum, v.tables, v.batch)
			v.wall, v.self, v.jvm, v.content, v.read = append(v.wall, w), append(v.self, c), append(v.jvm, j), content, read
		}
	}
	for _, v := range variants[1:] {
		if d := diffLines(variants[0].content, v.content); d != "" {
			t.Errorf("update (%s): the index differs from the embedded path's:\n%s", v.name, d)
		}
	}
	logf("update of %d files, %.1f MB (regular user_id, bloom track_uri, range ts), medians of %d, load %s:", len(files), float64(lakeBytes)/1e6, uruns, loadAvg())
	for _, v := range variants {
		logf("  %-20s wall %10v  CPU here %8v  Spark JVM CPU %8v  Spark read %d files, %.1f MB", v.name, median(v.wall).Round(time.Millisecond),
			median(v.self).Round(time.Millisecond), median(v.jvm).Round(time.Millisecond), v.read.files, float64(v.read.bytes)/1e6)
	}
	if variants[1].read != variants[2].read || variants[1].read.files == 0 {
		t.Errorf("update: Spark read %+v streaming the summaries, %+v writing them", variants[1].read, variants[2].read)
	}
}

// scanRead is what Spark's file scans read.
type scanRead struct{ files, bytes int64 }

// eventLogScans sums, over Spark's event logs in dir, the file scans'
// "number of files read" and "size of files read": the metrics' ids from
// each SQL execution's plan (and its adaptive updates), their values from
// the driver's metric updates.
func eventLogScans(t *testing.T, dir string) scanRead {
	t.Helper()
	type metric struct {
		Name          string `json:"name"`
		AccumulatorID int64  `json:"accumulatorId"`
	}
	type planInfo struct {
		Children []planInfo `json:"children"`
		Metrics  []metric   `json:"metrics"`
	}
	kind := map[int64]string{}
	var walk func(p planInfo)
	walk = func(p planInfo) {
		for _, m := range p.Metrics {
			kind[m.AccumulatorID] = m.Name
		}
		for _, c := range p.Children {
			walk(c)
		}
	}
	var updates [][2]int64
	logs, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			var ev struct {
				Event        string     `json:"Event"`
				PlanInfo     *planInfo  `json:"sparkPlanInfo"`
				SQLMetrics   []metric   `json:"sqlPlanMetrics"`
				AccumUpdates [][2]int64 `json:"accumUpdates"`
			}
			if json.Unmarshal(line, &ev) != nil {
				continue // a line being written
			}
			if ev.PlanInfo != nil {
				walk(*ev.PlanInfo)
			}
			for _, m := range ev.SQLMetrics {
				kind[m.AccumulatorID] = m.Name
			}
			updates = append(updates, ev.AccumUpdates...)
		}
	}
	var r scanRead
	for _, u := range updates {
		switch kind[u[0]] {
		case "number of files read":
			r.files += u[1]
		case "size of files read":
			r.bytes += u[1]
		}
	}
	return r
}

// benchRowIndex measures a hash row index on user_id over the whole lake
// built locally and with Spark computing the key runs (16 files per
// request), alternating, 3 runs each: medians of wall time and CPU (here
// and the Spark JVM's), and what Spark's scans read. Both builds must
// write the same fragments.
func benchRowIndex(t *testing.T, ctx context.Context, dir string, uris []string, lakeBytes int64, eng *sparkengine.Engine, jvm int, logf func(string, ...any)) {
	res := store.NewResolver(store.ResolverOptions{})
	def := rowindex.Definition{Name: "user_id", Key: "user_id", Kind: rowindex.KindHash}
	build := func(run int, spark bool) (wall, self, jcpu time.Duration, man *rowindex.Manifest, st rowindex.BuildStats) {
		idx := openStore(t, ctx, mustMkdir(t, filepath.Join(dir, fmt.Sprintf("ri-%d-%v", run, spark))))
		var opts []rowindex.BuildOption
		if spark {
			opts = append(opts, rowindex.WithEngine(eng, 0))
		}
		s0, j0 := selfCPU(), procCPU(jvm)
		t0 := time.Now()
		man, st, err := rowindex.Create(ctx, idx, def, res, uris, opts...)
		if err != nil {
			t.Fatalf("row index (spark %v): %v", spark, err)
		}
		return time.Since(t0), selfCPU() - s0, procCPU(jvm) - j0, man, st
	}
	const runs = 3
	var lw, sw, lc, sc, jc []time.Duration
	var lman, sman *rowindex.Manifest
	var sst rowindex.BuildStats
	for run := range runs {
		w, c, _, m, _ := build(run, false)
		lw, lc, lman = append(lw, w), append(lc, c), m
		w, c, j, m, st := build(run, true)
		sw, sc, jc, sman, sst = append(sw, w), append(sc, c), append(jc, j), m, st
	}
	if !reflect.DeepEqual(lman.Files, sman.Files) || len(lman.Fragments) != len(sman.Fragments) {
		t.Errorf("row index: Spark's build differs from the local one")
	}
	for i := range min(len(lman.Fragments), len(sman.Fragments)) {
		a, b := lman.Fragments[i], sman.Fragments[i]
		if a.Size != b.Size || a.Entries != b.Entries || !reflect.DeepEqual(a.Groups, b.Groups) {
			t.Errorf("row index: fragment %d differs", i)
		}
	}
	if sst.EngineFilesRead != int64(len(uris)) || sst.EngineBytesRead != lakeBytes {
		t.Errorf("row index: Spark read %d files, %d bytes; the lake has %d, %d", sst.EngineFilesRead, sst.EngineBytesRead, len(uris), lakeBytes)
	}
	logf("row index (hash, user_id) over %d files, %.1f MB, %d entries, medians of %d: local %v (CPU %v); spark %v (CPU here %v, Spark JVM %v; Spark read %d files, %.1f MB); load %s",
		len(uris), float64(lakeBytes)/1e6, lman.Entries(), runs, median(lw).Round(time.Millisecond), median(lc).Round(time.Millisecond),
		median(sw).Round(time.Millisecond), median(sc).Round(time.Millisecond), median(jc).Round(time.Millisecond),
		sst.EngineFilesRead, float64(sst.EngineBytesRead)/1e6, loadAvg())
}

// selfCPU is this process's user+sys CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is process pid's user+sys CPU time (from /proc, in clock ticks
// of 10 ms), 0 if unknown.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count from its ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

func mustMkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// loadAvg is the 1-minute load average, for the record.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	var l float64
	fmt.Sscan(string(b), &l)
	return strconv.FormatFloat(l, 'f', 1, 64)
}
