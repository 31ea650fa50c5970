package fileindex

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// countingWrap is a store.ResolverOptions.Wrap that counts the requests of
// every store the resolver opens (for a local lake: the one file:/// store).
type countingWrap struct {
	mu     sync.Mutex
	stores []*store.Counting
}

func (c *countingWrap) wrap(s store.Store) store.Store {
	cs := store.NewCounting(s)
	c.mu.Lock()
	c.stores = append(c.stores, cs)
	c.mu.Unlock()
	return cs
}

// snapshot sums the counters of every wrapped store.
func (c *countingWrap) snapshot() store.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var t store.Stats
	for _, s := range c.stores {
		x := s.Snapshot()
		t.Read.Requests += x.Read.Requests
		t.Read.Bytes += x.Read.Bytes
		t.Total.Requests += x.Total.Requests
	}
	return t
}

// heapSampler samples the Go heap every 10 ms until stopped and keeps the
// largest HeapInuse seen. DuckDB's allocations are C memory: they show in
// the process's peak RSS only.
type heapSampler struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
}

// startHeapSampler starts sampling. With a non-empty profile path it also
// writes a heap profile there each time the peak grows by 64 MiB, to see
// what the peak is made of (ARIADNE_BENCH_HEAPPROF in the benchmarks).
func startHeapSampler(profile string) *heapSampler {
	h := &heapSampler{stop: make(chan struct{})}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		var ms runtime.MemStats
		var dumped uint64
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if profile != "" && ms.HeapInuse > dumped+64<<20 {
				dumped = ms.HeapInuse
				if f, err := os.Create(profile); err == nil {
					pprof.WriteHeapProfile(f)
					f.Close()
				}
			}
			h.peak = max(h.peak, ms.HeapInuse)
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return h
}

// Stop stops sampling and returns the peak.
func (h *heapSampler) Stop() uint64 {
	close(h.stop)
	h.done.Wait()
	return h.peak
}

// resetPeakRSS resets the kernel's peak RSS (VmHWM) of this process by
// writing 5 to /proc/self/clear_refs (Linux ≥ 4.0); false if it could not.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// peakRSS is the process's peak resident set size (VmHWM of
// /proc/self/status) in bytes, -1 if unknown.
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// benchUpdate runs the update and fills rep.Update.
func benchUpdate(ctx context.Context, fi *FileIndex, rep *BenchReport, idxDir string) error {
	runtime.GC()
	u := &rep.Update
	u.RSSReset = resetPeakRSS()
	hs := startHeapSampler("")
	start := time.Now()
	r, err := fi.Update(ctx, UpdateOptions{})
	u.Time = time.Since(start)
	u.HeapPeak = hs.Stop()
	u.RSSPeak = peakRSS()
	if err != nil {
		return err
	}
	if r.NewFiles != rep.Files {
		return fmt.Errorf("fileindex bench: update indexed %d of %d files (skipped %d)", r.NewFiles, rep.Files, len(r.Skipped))
	}
	u.Batches = r.Batches
	mb := float64(rep.DataBytes) / 1e6
	u.MBps = mb / u.Time.Seconds()
	if u.ScanTime > 0 {
		u.ScanMBps = mb / u.ScanTime.Seconds()
		u.Ratio = u.Time.Seconds() / u.ScanTime.Seconds()
	}
	u.IndexSize = dirSize(idxDir)
	return nil
}

// benchColdLocate times cold locates: each on a new FileIndex, so the query
// loads the view of the table version first.
func benchColdLocate(ctx context.Context, ix *index.Index, root *store.Counting, keys *benchKeys, n, queries int) (BenchLocate, error) {
	out := BenchLocate{Keys: n, Cold: true, Queries: queries}
	err := timeLocates(ctx, &out, root, keys, func() *FileIndex {
		runtime.GC()
		return New(ix, Options{})
	})
	return out, err
}

// benchWarmLocate times locates on fi after one untimed query has loaded
// the view.
func benchWarmLocate(ctx context.Context, fi *FileIndex, root *store.Counting, keys *benchKeys, n, queries int) (BenchLocate, error) {
	out := BenchLocate{Keys: n, Queries: queries}
	if _, err := fi.Locate(ctx, Query{"user_id": keys.query(n)}); err != nil {
		return out, err
	}
	err := timeLocates(ctx, &out, root, keys, func() *FileIndex { return fi })
	return out, err
}

// timeLocates runs out.Queries locates of out.Keys keys, each on the
// FileIndex that handle returns (untimed), and records latency, requests,
// bytes and files located.
func timeLocates(ctx context.Context, out *BenchLocate, root *store.Counting, keys *benchKeys, handle func() *FileIndex) error {
	var lats []time.Duration
	for range out.Queries {
		q := Query{"user_id": keys.query(out.Keys)}
		fi := handle()
		before := root.Snapshot()
		t0 := time.Now()
		files, err := fi.Locate(ctx, q)
		if err != nil {
			return err
		}
		lats = append(lats, time.Since(t0))
		d := root.Snapshot().Sub(before)
		out.Requests += float64(d.Total.Requests)
		out.Bytes += float64(d.Read.Bytes)
		out.Files += float64(len(files))
	}
	out.finish(lats)
	return nil
}

func (l *BenchLocate) finish(lats []time.Duration) {
	l.P50, l.P99 = percentiles(lats)
	if n := float64(len(lats)); n > 0 {
		l.Requests /= n
		l.Bytes /= n
		l.Files /= n
	}
}

// benchKeySchema is the keys' schema: one user_id column.
var benchKeySchema = &schema.Struct{Fields: []schema.Field{{Name: "user_id", Type: schema.Long, Nullable: true}}}

// benchJoin joins users with the lake through fi.Join and through DuckDB
// reading every file, draining both results into Go rows, and checks that
// they return the same rows (benchDrain's multiset hash). Short joins are
// noisy on a shared machine, so the pair is repeated, alternating, while
// it takes under benchJoinBudget (at most benchJoinRuns times), and each
// side reports its median.
func benchJoin(ctx context.Context, fi *FileIndex, data *countingWrap, users []int64, paths []string, skipDuck bool) (BenchJoin, error) {
	out := BenchJoin{Keys: len(users), DuckFiles: len(paths)}
	rows := make([][]any, len(users))
	for i, u := range users {
		rows[i] = []any{u}
	}
	var ours, duck []time.Duration
	start := time.Now()
	for len(ours) < benchJoinRuns && (len(ours) == 0 || time.Since(start) < benchJoinBudget) {
		before := data.snapshot()
		t0 := time.Now()
		r, err := fi.Join(ctx, RowsSource(benchKeySchema, rows), []string{"user_id"}, Inner, JoinOptions{})
		if err != nil {
			return out, err
		}
		n, sum, err := benchDrain(ctx, r.Next)
		out.Files = len(r.Files())
		out.Stats = r.Stats()
		r.Close()
		if err != nil {
			return out, err
		}
		ours = append(ours, time.Since(t0))
		out.Rows = n
		out.Bytes = data.snapshot().Read.Bytes - before.Read.Bytes
		if skipDuck {
			continue
		}
		t0 = time.Now()
		dn, duckSum, err := duckJoin(ctx, rows, paths)
		if err != nil {
			return out, err
		}
		duck = append(duck, time.Since(t0))
		if dn != n || duckSum != sum {
			return out, fmt.Errorf("fileindex bench: join of %d users: file index %d rows (hash %x), DuckDB %d rows (hash %x)",
				len(users), n, sum, dn, duckSum)
		}
	}
	out.Runs = len(ours)
	out.Time, _ = percentiles(ours)
	out.DuckTime, _ = percentiles(duck)
	return out, nil
}

// benchJoinRuns and benchJoinBudget bound the repetitions of one key
// count's joins: a 1-key join is repeated 5 times, a 1,000-key one runs
// once.
const (
	benchJoinRuns   = 5
	benchJoinBudget = 5 * time.Second
)

// benchDrain counts the rows of a stream until io.EOF and sums a hash of
// each row: the sum does not depend on the rows' order, so two results
// with equal counts and sums hold the same rows (up to hash collisions).
// Hashing costs the same per row for both joins.
func benchDrain(ctx context.Context, next func(context.Context) ([][]any, error)) (int64, uint64, error) {
	var n int64
	var sum uint64
	h := fnv.New64a()
	var buf []byte
	for {
		b, err := next(ctx)
		if err == io.EOF {
			return n, sum, nil
		}
		if err != nil {
			return n, sum, err
		}
		n += int64(len(b))
		for _, row := range b {
			buf = benchRowBytes(buf[:0], row)
			h.Reset()
			h.Write(buf)
			sum += h.Sum64()
		}
	}
}

// benchRowBytes appends a canonical encoding of a row's values: integers
// of any width as int64, timestamps as Unix microseconds (time zone
// ignored), strings length-prefixed.
func benchRowBytes(dst []byte, row []any) []byte {
	for _, v := range row {
		switch x := v.(type) {
		case nil:
			dst = append(dst, 0)
		case string:
			dst = append(dst, 1)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(x)))
			dst = append(dst, x...)
		case time.Time:
			dst = append(dst, 2)
			dst = binary.LittleEndian.AppendUint64(dst, uint64(x.UnixMicro()))
		default:
			if i, ok := pqrow.AsInt64(v); ok {
				dst = append(dst, 3)
				dst = binary.LittleEndian.AppendUint64(dst, uint64(i))
			} else {
				dst = append(dst, 4)
				dst = fmt.Append(dst, v)
				dst = append(dst, 0)
			}
		}
	}
	return dst
}

// duckJoin is the baseline a user would run without an index: the keys
// loaded into DuckDB, joined with read_parquet over every file (DuckDB's
// own Parquet reader, with its row-group pruning and join filter
// pushdown; hive_partitioning off, so its rows have the lake's columns only,
// as ours), every result row brought back into Go as our join does.
// Settings are internal/duck's (threads = GOMAXPROCS, 1 GB memory).
func duckJoin(ctx context.Context, keys [][]any, paths []string) (int64, uint64, error) {
	tmp, err := os.MkdirTemp("", "ariadne-bench-duck-*")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(tmp)
	db, err := duck.Open(ctx, duck.Options{TempDirectory: tmp})
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	if _, err := db.Load(ctx, "k", duckKeys{RowsSource(benchKeySchema, keys)}); err != nil {
		return 0, 0, err
	}
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = duck.String(p)
	}
	rows, err := db.Query(ctx, "SELECT * FROM k JOIN read_parquet(["+strings.Join(quoted, ",")+"], hive_partitioning = false) USING (user_id)")
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	return benchDrain(ctx, func(ctx context.Context) ([][]any, error) { return rows.Next(ctx) })
}

// Format writes the report as the tables of docs/fileindex.md.
func (r *BenchReport) Format(w io.Writer) {
	layout := "arrival order"
	if r.Sorted {
		layout = "bucketed by user and sorted"
	}
	fmt.Fprintf(w, "Lake: %d Parquet files, %.0f MB, %d rows, %d users (Zipf), %s. Indexes: %s. GOMAXPROCS %d, %s.\n\n",
		r.Files, float64(r.DataBytes)/1e6, r.Rows, r.Users, layout, strings.Join(r.Indexes, ", "), r.Procs, r.GoVersion)
	u := r.Update
	rss := "n/a"
	if u.RSSPeak >= 0 {
		rss = fmt.Sprintf("%.0f MiB", float64(u.RSSPeak)/(1<<20))
		if !u.RSSReset {
			rss += " (process-wide)"
		}
	}
	fmt.Fprintln(w, "| update | batches | MB/s of input | bare scan (same columns, same reader) | update / scan | Go heap peak | RSS peak | index size |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	scan, ratio := "skipped", "n/a"
	if u.ScanTime > 0 {
		scan = fmt.Sprintf("%v (%.1f MB/s)", benchRound(u.ScanTime), u.ScanMBps)
		ratio = fmt.Sprintf("%.2f", u.Ratio)
	}
	fmt.Fprintf(w, "| %v | %d | %.1f | %s | %s | %.0f MiB | %s | %.1f MB |\n\n", benchRound(u.Time), u.Batches, u.MBps,
		scan, ratio, float64(u.HeapPeak)/(1<<20), rss, float64(u.IndexSize)/1e6)

	fmt.Fprintln(w, "| locate | keys | queries | p50 | p99 | index requests/query | index bytes/query | files located/query |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, l := range r.Locate {
		kind := "warm"
		if l.Cold {
			kind = "cold"
		}
		fmt.Fprintf(w, "| %s | %d | %d | %v | %v | %.1f | %.0f | %.1f |\n", kind, l.Keys, l.Queries, benchRound(l.P50), benchRound(l.P99),
			l.Requests, l.Bytes, l.Files)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| join (inner) | keys | rows | runs | file index (median) | path | files read | key pages skipped | rows scanned | MB read | DuckDB over all files (median) | DuckDB / file index |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, j := range r.Join {
		duckT, ratio := "skipped", "n/a"
		if j.DuckTime > 0 {
			duckT = fmt.Sprintf("%v (%d files)", benchRound(j.DuckTime), j.DuckFiles)
			ratio = fmt.Sprintf("%.2f", j.DuckTime.Seconds()/j.Time.Seconds())
		}
		fmt.Fprintf(w, "| | %d | %d | %d | %v | %s | %d of %d | %d of %d | %d | %.1f | %s | %s |\n", j.Keys, j.Rows, j.Runs, benchRound(j.Time), j.Stats.Path,
			j.Files, r.Files, j.Stats.PagesSkipped, j.Stats.Pages, j.Stats.RowsScanned, float64(j.Bytes)/1e6, duckT, ratio)
	}
}

// benchRound rounds a duration to three significant digits or so.
func benchRound(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Second:
		return d.Round(100 * time.Millisecond)
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
