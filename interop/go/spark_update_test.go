package interop

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/cli"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/sparkengine"
	"github.com/ariadne-go/ariadne/store"
)

// updExact renders a stored value with its Go type and exact content (-0
// and 0 told apart, timestamps to the nanosecond with their zone, decimals
// with their scale, binaries in hex).
func updExact(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = updExact(e)
		}
		return "(" + strings.Join(parts, ",") + ")"
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case time.Time:
		return x.Format(time.RFC3339Nano) + "@" + x.Location().String()
	case pqrow.Decimal:
		return x.Unscaled.String() + "e-" + fmt.Sprint(x.Scale)
	case float64:
		if math.Signbit(x) && x == 0 {
			return "float64(-0)"
		}
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// updCell renders a main-table cell: value arrays as sorted sets (their
// order is the engine's: DuckDB's list(DISTINCT), first seen in Go),
// everything else exactly (bloom filters byte for byte, ranges as {min,
// max}).
func updCell(name string, v any) string {
	if x, ok := v.([]any); ok && !strings.HasPrefix(name, "range_") {
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = updExact(e)
		}
		sort.Strings(parts)
		return "[" + strings.Join(parts, ",") + "]"
	}
	return updExact(v)
}

// indexContent renders everything an index holds: the main table's schema
// and rows, every large-index table's rows, the metadata counters, and how
// many commits the main table has (the same batching makes the same
// commits).
func indexContent(t *testing.T, ctx context.Context, ix *index.Index) []string {
	t.Helper()
	if err := ix.RefreshMetadata(ctx); err != nil {
		t.Fatal(err)
	}
	root := ix.Root()
	var out []string
	table := func(key string) {
		tb, err := delta.Open(ctx, store.Sub(root, key))
		if errors.Is(err, delta.ErrNotATable) {
			return
		}
		if err != nil {
			t.Fatalf("open %s: %v", key, err)
		}
		snap, err := tb.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s: version %d, schema %s", key, snap.Version(), snap.Schema().Marshal()))
		var lines []string
		for r, err := range snap.Scan(ctx, delta.ScanOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			var cells []string
			for i, f := range snap.Schema().Fields {
				v := r[i]
				if s, ok := v.(string); ok && f.Name == fileindex.FilenameColumn {
					v = s[strings.LastIndex(s, "/")+1:]
				}
				cells = append(cells, f.Name+"="+updCell(f.Name, v))
			}
			lines = append(lines, key+": "+strings.Join(cells, " "))
		}
		sort.Strings(lines)
		out = append(out, lines...)
	}
	m := ix.Metadata()
	table(ix.Paths().Main)
	for _, c := range m.Indexes {
		table(ix.Paths().LargeIndex(c))
	}
	for _, x := range m.ExplodedFieldIndexes {
		table(ix.Paths().LargeIndex(x.AsColumn))
	}
	for _, x := range m.TemporalIndexes {
		table(ix.Paths().LargeIndex(x.Column))
	}
	for c := range m.ComputedIndexes.All() {
		table(ix.Paths().LargeIndex(c))
	}
	out = append(out, fmt.Sprintf("metadata: auto-bloom %v, total indexed size %d, batches since compact %d",
		m.AutoBloomIndexes, m.TotalIndexedFileSize, m.BatchesSinceCompact))
	return out
}

// buildUpdIndex creates index d under root and updates it in two rounds
// (the first four files, then the rest: the second update adds to a main
// table), with sum computing the summaries (nil: the embedded path).
func buildUpdIndex(t *testing.T, ctx context.Context, root string, d engineIndex, lake map[string][]string, sum fileindex.SummaryEngine) (*index.Index, *fileindex.FileIndex, []fileindex.UpdateResult) {
	return buildUpdIndexWith(t, ctx, root, d, lake, fileindex.UpdateOptions{Summaries: sum})
}

// buildUpdIndexWith is buildUpdIndex with the update's options (three
// files per Spark request).
func buildUpdIndexWith(t *testing.T, ctx context.Context, root string, d engineIndex, lake map[string][]string, uopts fileindex.UpdateOptions) (*index.Index, *fileindex.FileIndex, []fileindex.UpdateResult) {
	sum := uopts.Summaries
	t.Helper()
	cat := index.NewCatalog(openStore(t, ctx, root), index.Options{})
	st, ro := engineSchemaFull, map[string]string(nil)
	if d.format == "csv" {
		st, ro = engineSchemaCSV, map[string]string{"header": "true"}
	}
	ix, err := cat.Open(ctx, d.name, index.OpenOptions{Schema: st, Format: d.format, ReadOptions: ro})
	if err != nil {
		t.Fatalf("open %s: %v", d.name, err)
	}
	if err := d.setup(ctx, ix); err != nil {
		t.Fatalf("%s: %v", d.name, err)
	}
	opts := fileindex.Options{}
	if d.large {
		cfg := config.Defaults()
		cfg.LargeIndexLimit = 2
		opts.Config = &cfg
	}
	fi := fileindex.New(ix, opts)
	uris, err := ix.ExpandFiles(ctx, lake[d.format])
	if err != nil {
		t.Fatal(err)
	}
	var results []fileindex.UpdateResult
	for _, part := range [][]string{uris[:4], uris[4:]} {
		if _, err := ix.AddFiles(ctx, part...); err != nil {
			t.Fatal(err)
		}
		// Three files per Spark request: the first round takes two.
		uopts.SummaryBatchFiles = 3
		res, err := fi.Update(ctx, uopts)
		if err != nil {
			t.Fatalf("update %s (summaries by %v): %v", d.name, sum != nil, err)
		}
		results = append(results, res)
	}
	return ix, fi, results
}

// locateAnswers locates every key of engineKeys for each column of d.on,
// one value at a time and all together.
func locateAnswers(t *testing.T, ctx context.Context, fi *fileindex.FileIndex, d engineIndex) []string {
	t.Helper()
	var out []string
	for _, col := range d.on {
		src := engineKeys(col)
		rows, err := src.Next(ctx)
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		var all []any
		for _, r := range rows {
			if r[0] == nil {
				continue
			}
			all = append(all, r[0])
			files, err := fi.Locate(ctx, fileindex.Query{col: {r[0]}})
			if err != nil {
				t.Fatalf("locate %s=%v: %v", col, r[0], err)
			}
			out = append(out, fmt.Sprintf("%s=%v: %v", col, r[0], files))
		}
		files, err := fi.Locate(ctx, fileindex.Query{col: all})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s in %v: %v", col, all, files))
	}
	return out
}

// TestSparkEngineUpdate is issue 14 item 1 for updates: for every index
// type (regular, bloom, range, computed, exploded, temporal, large with
// auto-bloom) over parquet, csv and json files, an update whose per-file
// summaries Spark computes (through Spark Connect, three files per
// request, in two rounds) persists exactly the index the embedded path
// persists — every main-table cell (value arrays as sets, bloom filters
// byte for byte, ranges exactly), every large-index row, the Delta
// versions, the metadata counters — and answers every locate the same.
// Then a connection cut mid-update (a proxy on loopback between our client
// and the server) fails the update with a connection error, leaves the
// index folder byte for byte as it was, and the next update completes with
// the same index.
func TestSparkEngineUpdate(t *testing.T) {
	e := loadEnv(t)
	ctx := testContext(t, 20*time.Minute)
	dir := t.TempDir()
	lake := writeEngineLake(t, filepath.Join(dir, "lake"))
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

	for _, d := range engineIndexes {
		t.Run(d.name, func(t *testing.T) {
			duckIx, duckFi, _ := buildUpdIndex(t, ctx, filepath.Join(dir, "duck"), d, lake, nil)
			want, wl := indexContent(t, ctx, duckIx), locateAnswers(t, ctx, duckFi, d)
			duckKeys := layoutKeys(t, filepath.Join(dir, "duck"), d.name)
			if len(want) < 8 {
				t.Errorf("index content has %d lines: nothing to compare", len(want))
			}
			// Summaries streamed back as Arrow, then written by Spark's
			// Delta writer into the index's folder and read back.
			for _, tables := range []bool{false, true} {
				t0 := time.Now()
				root := filepath.Join(dir, "spark")
				if tables {
					root = filepath.Join(dir, "spark-tables")
				}
				sparkIx, sparkFi, res := buildUpdIndexWith(t, ctx, root, d, lake, fileindex.UpdateOptions{Summaries: eng, SummaryTables: tables})
				for i, r := range res {
					if r.SummarizedBy != r.NewFiles || r.EngineFiles != 0 || r.NewFiles == 0 {
						t.Errorf("tables %v, round %d: %d new files, %d summarised by Spark, %d by DuckDB", tables, i, r.NewFiles, r.SummarizedBy, r.EngineFiles)
					}
				}
				if d := diffLines(want, indexContent(t, ctx, sparkIx)); d != "" {
					t.Errorf("index content differs (want embedded, got spark, tables %v):\n%s", tables, d)
				}
				if gl := locateAnswers(t, ctx, sparkFi, d); !slices.Equal(wl, gl) {
					t.Errorf("locate answers differ (want embedded, got spark, tables %v):\n%s", tables, diffLines(wl, gl))
				}
				// The same persisted layout: the same objects (Delta data
				// files by folder and count; their names are random), no
				// summary table left in the index's folder.
				if k := layoutKeys(t, root, d.name); !slices.Equal(duckKeys, k) {
					t.Errorf("persisted layout differs (want embedded, got spark, tables %v):\n%s", tables, diffLines(duckKeys, k))
				}
				t.Logf("%d content lines, %d locates and %d layout entries identical; Spark updates (tables %v) took %s", len(want), len(wl), len(duckKeys), tables, time.Since(t0).Round(time.Millisecond))
			}
		})
	}

	t.Run("face and cli", func(t *testing.T) {
		testSparkUpdateFaceCLI(t, ctx, srv, dir, lake)
	})

	t.Run("zeros", func(t *testing.T) {
		testSparkUpdateZeros(t, ctx, dir, eng)
	})

	t.Run("connection cut mid-update", func(t *testing.T) {
		testSparkUpdateCut(t, ctx, srv, dir, lake)
	})

	t.Run("summary tables: server killed mid-write, leftovers", func(t *testing.T) {
		testSparkUpdateTablesKilled(t, ctx, e, eng, dir, lake)
	})
}

// layoutKeys lists the objects of index name under root: every key, with
// a Delta data file's random name replaced by "part-*" and the count of
// them per folder, so that two builds of one index compare.
func layoutKeys(t *testing.T, root, name string) []string {
	t.Helper()
	dir := filepath.Join(root, "indexes", name)
	counts := map[string]int{}
	for p := range snapshotDir(t, dir) {
		rel, _ := filepath.Rel(dir, p)
		if b := filepath.Base(rel); strings.HasPrefix(b, "part-") && strings.HasSuffix(b, ".parquet") {
			rel = filepath.Join(filepath.Dir(rel), "part-*")
		}
		counts[rel]++
	}
	var out []string
	for k, n := range counts {
		out = append(out, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(out)
	return out
}

// jobTap is a SummaryTableEngine that records the jobs it passes on.
type jobTap struct {
	*sparkengine.Engine
	jobs []*fileindex.SummaryJob
}

func (e *jobTap) SummarizeToTable(ctx context.Context, job *fileindex.SummaryJob, uri string) error {
	e.jobs = append(e.jobs, job)
	return e.Engine.SummarizeToTable(ctx, job, uri)
}

// testSparkUpdateTablesKilled: an update whose summaries Spark writes as
// Delta tables into the index's folder (one file per request) has its
// Spark Connect server killed (SIGKILL) once Spark's tasks put data files
// down in the update's summary table. The update fails with a connection
// error and the index folder is byte for byte as before (the killed
// write's files deleted). Then a dead attempt's leftovers are planted — a
// table Spark committed for the same files with other values (user
// suffixed "-dead"), and a half-written one — and the next update, on a
// live server, builds exactly the embedded path's index and leaves no
// summary table.
func testSparkUpdateTablesKilled(t *testing.T, ctx context.Context, e *Env, eng *sparkengine.Engine, dir string, lake map[string][]string) {
	d := engineIndexes[0] // pq_all: regular, bloom, range, computed, exploded
	root := filepath.Join(dir, "killed")
	cat := index.NewCatalog(openStore(t, ctx, root), index.Options{})
	ix, err := cat.Open(ctx, d.name, index.OpenOptions{Schema: engineSchemaFull, Format: d.format})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.setup(ctx, ix); err != nil {
		t.Fatal(err)
	}
	uris, err := ix.ExpandFiles(ctx, lake[d.format])
	if err != nil {
		t.Fatal(err)
	}
	fi := fileindex.New(ix, fileindex.Options{})
	if _, err := ix.AddFiles(ctx, uris[:4]...); err != nil {
		t.Fatal(err)
	}
	if _, err := fi.Update(ctx, fileindex.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.AddFiles(ctx, uris[4:]...); err != nil {
		t.Fatal(err)
	}
	before := snapshotDir(t, root)
	summaries := filepath.Join(root, "indexes", d.name, fileindex.SummaryTablesFolder)

	dir2 := mustMkdir(t, filepath.Join(dir, "killed-server"))
	srv2, err := e.StartConnectServer(ctx, ConnectOptions{LogFile: filepath.Join(dir2, "connect-server.log"), StartTimeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv2.Stop)
	eng2, err := sparkengine.New(ctx, srv2.Remote(), sparkengine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng2.Close()
	done := make(chan error, 1)
	go func() {
		_, err := fi.Update(ctx, fileindex.UpdateOptions{Summaries: eng2, SummaryTables: true, SummaryBatchFiles: 1})
		done <- err
	}()
	var written []string
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		written, _ = filepath.Glob(filepath.Join(summaries, "*", "*.parquet"))
		if len(written) > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the update ended before Spark wrote a data file: %v", err)
		default:
		}
	}
	commits, _ := filepath.Glob(filepath.Join(summaries, "*", "_delta_log", "*.json"))
	srv2.kill(9)
	err = <-done
	var se *sparkengine.Error
	if !errors.As(err, &se) || se.Kind != sparkengine.KindConnection {
		t.Fatalf("update with the server killed: %v (%T), want a *sparkengine.Error of kind connection", err, err)
	}
	t.Logf("killed with %d data file(s) and %d commit(s) in the summary tables: %v", len(written), len(commits), err)
	if len(written) == 0 {
		t.Errorf("no data file written before the kill: the write was not cut mid-way")
	}
	after := snapshotDir(t, root)
	if d := diffLines(sortedKeys(before), sortedKeys(after)); d != "" {
		t.Errorf("index folder changed by the failed update:\n%s", d)
	}
	for p, b := range before {
		if after[p] != b {
			t.Errorf("index file %s changed by the failed update", p)
		}
	}

	// A dead attempt's leftovers: a committed table for the same files
	// with other values, and a half-written one.
	tap := &jobTap{Engine: eng}
	ref := filepath.Join(dir, "killed-ref")
	rix, rfi, _ := buildUpdIndexWith(t, ctx, ref, d, lake, fileindex.UpdateOptions{Summaries: tap, SummaryTables: true})
	want := indexContent(t, ctx, rix)
	if len(tap.jobs) == 0 {
		t.Fatal("no summary job recorded")
	}
	for i, job := range tap.jobs {
		dead := *job
		dead.Computed = append(slices.Clone(job.Computed), fileindex.Computed{Name: "user", Expr: "concat(user, '-dead')"})
		uri := "file://" + filepath.Join(summaries, fmt.Sprintf("dead-%d", i))
		if err := eng.SummarizeToTable(ctx, &dead, uri); err != nil {
			t.Fatal(err)
		}
	}
	parts, _ := filepath.Glob(filepath.Join(summaries, "dead-0", "*.parquet"))
	if len(parts) == 0 {
		t.Fatal("the leftover table has no data file")
	}
	half := mustMkdir(t, filepath.Join(summaries, "half"))
	data, err := os.ReadFile(parts[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(half, filepath.Base(parts[0])), data, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := fi.Update(ctx, fileindex.UpdateOptions{Summaries: eng, SummaryTables: true, SummaryBatchFiles: 1})
	if err != nil {
		t.Fatalf("update after the kill: %v", err)
	}
	if res.NewFiles != 2 || res.SummarizedBy != 2 {
		t.Errorf("update after the kill: %+v, want the 2 new files summarised by Spark", res)
	}
	if d := diffLines(want, indexContent(t, ctx, ix)); d != "" {
		t.Errorf("index after the retry differs from the reference:\n%s", d)
	}
	if !slices.ContainsFunc(want, func(l string) bool { return strings.Contains(l, "u1") }) || slices.ContainsFunc(want, func(l string) bool { return strings.Contains(l, "-dead") }) {
		t.Errorf("reference index: want user u1 and no -dead value")
	}
	if left, _ := filepath.Glob(filepath.Join(summaries, "*")); len(left) > 0 {
		// (The folder itself may stay, empty, on a local store.)
		t.Errorf("summary tables left after the retry: %v", left)
	}
	if wl, gl := locateAnswers(t, ctx, rfi, d), locateAnswers(t, ctx, fi, d); !slices.Equal(wl, gl) {
		t.Errorf("locate answers differ after the retry:\n%s", diffLines(wl, gl))
	}
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// faultProxy forwards loopback connections to a Spark Connect server until
// cut: then it closes every open connection and refuses new ones (accepts
// and closes them) until restored.
type faultProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	down   bool
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			down := p.down
			p.mu.Unlock()
			if down {
				c.Close()
				continue
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
	return p
}

func (p *faultProxy) remote() string { return "sc://" + p.ln.Addr().String() }

// cut closes every forwarded connection and refuses new ones.
func (p *faultProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *faultProxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// testSparkUpdateCut: an index with four files indexed gets two more; the
// update that indexes them through Spark (one file per request) has its
// connection cut once its second request reached the server. The update
// fails with a *sparkengine.Error of kind connection, the index folder is
// byte for byte unchanged, and the next update through the restored
// connection completes with the index the embedded path builds.
func testSparkUpdateCut(t *testing.T, ctx context.Context, srv *ConnectServer, dir string, lake map[string][]string) {
	d := engineIndexes[0] // pq_all: regular, bloom, range, computed, exploded
	root := filepath.Join(dir, "cut")
	cat := index.NewCatalog(openStore(t, ctx, root), index.Options{})
	ix, err := cat.Open(ctx, d.name, index.OpenOptions{Schema: engineSchemaFull, Format: d.format})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.setup(ctx, ix); err != nil {
		t.Fatal(err)
	}
	uris, err := ix.ExpandFiles(ctx, lake[d.format])
	if err != nil {
		t.Fatal(err)
	}
	fi := fileindex.New(ix, fileindex.Options{})
	if _, err := ix.AddFiles(ctx, uris[:4]...); err != nil {
		t.Fatal(err)
	}
	if _, err := fi.Update(ctx, fileindex.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.AddFiles(ctx, uris[4:]...); err != nil {
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
		_, err := fi.Update(ctx, fileindex.UpdateOptions{Summaries: peng, SummaryBatchFiles: 1})
		done <- err
	}()
	// Cut once the first batch's summary query reached the server (its
	// second request, after the read): the first query of the session
	// takes a while to plan, so the cut lands while it runs or streams.
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
		t.Fatalf("update with the connection cut: %v (%T), want a *sparkengine.Error of kind connection", err, err)
	}
	t.Logf("cut after %d requests reached the server: %v", cutAt, err)
	after := snapshotDir(t, root)
	if len(after) != len(before) {
		t.Errorf("index folder: %d files before the failed update, %d after", len(before), len(after))
	}
	for p, b := range before {
		if after[p] != b {
			t.Errorf("index file %s changed by the failed update", p)
		}
	}

	// The next update completes, with the embedded path's index.
	proxy.restore()
	res, err := fi.Update(ctx, fileindex.UpdateOptions{Summaries: peng, SummaryBatchFiles: 1})
	if err != nil {
		t.Fatalf("update after the cut: %v", err)
	}
	if res.NewFiles != 2 || res.SummarizedBy != 2 {
		t.Errorf("update after the cut: %+v, want the 2 new files summarised by Spark", res)
	}
	ref := filepath.Join(dir, "cut-ref")
	rcat := index.NewCatalog(openStore(t, ctx, ref), index.Options{})
	rix, err := rcat.Open(ctx, d.name, index.OpenOptions{Schema: engineSchemaFull, Format: d.format})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.setup(ctx, rix); err != nil {
		t.Fatal(err)
	}
	rfi := fileindex.New(rix, fileindex.Options{})
	for _, part := range [][]string{uris[:4], uris[4:]} {
		if _, err := rix.AddFiles(ctx, part...); err != nil {
			t.Fatal(err)
		}
		if _, err := rfi.Update(ctx, fileindex.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if d := diffLines(indexContent(t, ctx, rix), indexContent(t, ctx, ix)); d != "" {
		t.Errorf("index after the retry differs from the embedded path's:\n%s", d)
	}
}

var zerosSchema = mustSchema(`{"type":"struct","fields":[` +
	`{"name":"d","type":"double","nullable":true,"metadata":{}},` +
	`{"name":"e","type":"double","nullable":true,"metadata":{}},` +
	`{"name":"ts","type":"timestamp","nullable":true,"metadata":{}},` +
	`{"name":"arr","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"x","type":"double","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}},` +
	`{"name":"b","type":"double","nullable":true,"metadata":{}},` +
	`{"name":"r","type":"double","nullable":true,"metadata":{}}]}`)

// testSparkUpdateZeros: -0.0 and 0.0 are one value to Spark's grouping,
// which returns 0.0; the index keeps each file's first of them (and a bloom
// filter both renderings). Files holding -0.0 first, 0.0 first, and -0.0
// alone (with NaN), in a regular, bloom, range, exploded and temporal
// column, must persist exactly the embedded path's index.
func testSparkUpdateZeros(t *testing.T, ctx context.Context, dir string, eng fileindex.SummaryEngine) {
	neg := math.Copysign(0, -1)
	at := func(h int) time.Time { return time.Date(2024, 1, 1, h, 0, 0, 0, time.UTC) }
	arr := func(xs ...any) any {
		var out []any
		for _, x := range xs {
			out = append(out, []any{x})
		}
		return out
	}
	row := func(v any, h int, a any) []any { return []any{v, v, at(h), a, v, v} }
	files := [][][]any{
		{row(neg, 1, arr(neg, 0.0)), row(0.0, 2, arr(0.0)), row(1.5, 3, arr(1.5))},
		{row(0.0, 4, arr(0.0, neg)), row(neg, 5, arr(neg))},
		{row(neg, 6, arr(neg)), row(math.NaN(), 7, arr(math.NaN())), row(nil, 8, nil)},
	}
	lake := mustMkdir(t, filepath.Join(dir, "zeros-lake"))
	var paths []string
	for i, rows := range files {
		p := filepath.Join(lake, fmt.Sprintf("z%d.parquet", i))
		fh, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := pqrow.NewWriter(fh, zerosSchema, pqrow.WriterOptions{})
		if err := w.Write(rows...); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		paths = append(paths, p)
	}
	build := func(root string, sum fileindex.SummaryEngine, tables bool) (*index.Index, *fileindex.FileIndex) {
		cat := index.NewCatalog(openStore(t, ctx, root), index.Options{})
		ix, err := cat.Open(ctx, "zeros", index.OpenOptions{Schema: zerosSchema, Format: "parquet"})
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(ix.AddIndex(ctx, "d"), ix.AddBloomIndex(ctx, "b", 0.01), ix.AddRangeIndex(ctx, "r"),
			ix.AddExplodedFieldIndex(ctx, "arr", "x", "x"), ix.AddTemporalIndex(ctx, "e", "ts")); err != nil {
			t.Fatal(err)
		}
		uris, err := ix.ExpandFiles(ctx, paths)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.AddFiles(ctx, uris...); err != nil {
			t.Fatal(err)
		}
		fi := fileindex.New(ix, fileindex.Options{})
		if _, err := fi.Update(ctx, fileindex.UpdateOptions{Summaries: sum, SummaryTables: tables}); err != nil {
			t.Fatalf("update (spark %v, tables %v): %v", sum != nil, tables, err)
		}
		return ix, fi
	}
	dix, dfi := build(filepath.Join(dir, "zeros-duck"), nil, false)
	six, sfi := build(filepath.Join(dir, "zeros-spark"), eng, false)
	tix, tfi := build(filepath.Join(dir, "zeros-spark-tables"), eng, true)
	want, got := indexContent(t, ctx, dix), indexContent(t, ctx, six)
	if d := diffLines(want, got); d != "" {
		t.Errorf("index content differs (want embedded, got spark):\n%s", d)
	}
	if d := diffLines(want, indexContent(t, ctx, tix)); d != "" {
		t.Errorf("index content differs (want embedded, got spark with summary tables):\n%s", d)
	}
	if !slices.ContainsFunc(want, func(l string) bool { return strings.Contains(l, "float64(-0)") }) {
		t.Errorf("no -0.0 stored: the test proves nothing\n%s", strings.Join(want, "\n"))
	}
	for _, q := range []fileindex.Query{{"d": {neg}}, {"d": {0.0}}, {"x": {neg}}, {"e": {0.0}}, {"e": {neg}}, {"b": {neg}}, {"b": {0.0}}, {"r": {neg}}, {"e": {math.NaN()}}} {
		w, err := dfi.Locate(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		g, err := sfi.Locate(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(w, g) {
			t.Errorf("locate %v: embedded %v, spark %v", q, w, g)
		}
		if g, err = tfi.Locate(ctx, q); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(w, g) {
			t.Errorf("locate %v: embedded %v, spark with summary tables %v", q, w, g)
		}
	}
}

// testSparkUpdateFaceCLI: the library face (Index.UpdateWith with Engine
// "spark") and the command line (update --engine spark --spark URL --json)
// summarise on Spark and build the embedded path's index.
func testSparkUpdateFaceCLI(t *testing.T, ctx context.Context, srv *ConnectServer, dir string, lake map[string][]string) {
	d := engineIndexes[0]
	ref, _, _ := buildUpdIndex(t, ctx, filepath.Join(dir, "fc-ref"), d, lake, nil)
	want := indexContent(t, ctx, ref)
	for _, via := range []string{"face", "cli", "cli-tables"} {
		root := filepath.Join(dir, "fc-"+via)
		cat := index.NewCatalog(openStore(t, ctx, root), index.Options{})
		ix, err := cat.Open(ctx, d.name, index.OpenOptions{Schema: engineSchemaFull, Format: d.format})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.setup(ctx, ix); err != nil {
			t.Fatal(err)
		}
		uris, err := ix.ExpandFiles(ctx, lake[d.format])
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range [][]string{uris[:4], uris[4:]} {
			if _, err := ix.AddFiles(ctx, part...); err != nil {
				t.Fatal(err)
			}
			switch via {
			case "face":
				st, err := ariadne.Open(ctx, "file://"+root)
				if err != nil {
					t.Fatal(err)
				}
				fx, err := st.Index(ctx, d.name)
				if err != nil {
					t.Fatal(err)
				}
				res, err := fx.UpdateWith(ctx, ariadne.UpdateOptions{Engine: ariadne.EngineSpark, SparkRemote: srv.Remote()})
				st.Close()
				if err != nil {
					t.Fatalf("face: %v", err)
				}
				if res.File.SummarizedBy != len(part) {
					t.Errorf("face: %d files summarised on Spark, want %d", res.File.SummarizedBy, len(part))
				}
			case "cli", "cli-tables":
				var stdout, stderr bytes.Buffer
				args := []string{"--store", "file://" + root, "update", d.name, "--engine", "spark", "--spark", srv.Remote(), "--json"}
				if via == "cli-tables" {
					args = append(args, "--spark-summary-tables")
				}
				code := cli.Main(ctx, args, cli.Env{Stdout: &stdout, Stderr: &stderr})
				if code != 0 {
					t.Fatalf("cli update: exit %d: %s", code, stderr.String())
				}
				if !strings.Contains(stdout.String(), fmt.Sprintf(`"spark_files": %d`, len(part))) {
					t.Errorf("cli update --json: %s, want spark_files %d", stdout.String(), len(part))
				}
			}
		}
		if diff := diffLines(want, indexContent(t, ctx, ix)); diff != "" {
			t.Errorf("%s: index differs from the embedded path's:\n%s", via, diff)
		}
	}
	// A wrong engine name and a missing URL are usage errors.
	var stdout, stderr bytes.Buffer
	if code := cli.Main(ctx, []string{"--store", "file://" + filepath.Join(dir, "fc-cli"), "update", d.name, "--engine", "spark"}, cli.Env{Stdout: &stdout, Stderr: &stderr}); code != 2 || !strings.Contains(stderr.String(), "needs --spark") {
		t.Errorf("update --engine spark without a URL: exit %d, %s", code, stderr.String())
	}
}
