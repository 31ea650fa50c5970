package fileindexbench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
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
//
// With a profile path, the update's CPU profile is written there.
func measureUpdate(ctx context.Context, fi *fileindex.FileIndex, rep *Report, idxDir, profile string) error {
	runtime.GC()
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	u := &rep.Update
	u.RSSReset = resetPeakRSS()
	hs := startHeapSampler("")
	start, cpu0 := time.Now(), cpuTime()
	r, err := fi.Update(ctx, fileindex.UpdateOptions{})
	u.Time, u.CPU = time.Since(start), cpuTime()-cpu0
	if profile != "" {
		pprof.StopCPUProfile()
	}
	u.HeapPeak = hs.Stop()
	u.RSSPeak = peakRSS()
	if err != nil {
		return err
	}
	if r.NewFiles != rep.Files {
		return fmt.Errorf("fileindex bench: update indexed %d of %d files (skipped %d)", r.NewFiles, rep.Files, len(r.Skipped))
	}
	u.Batches = r.Batches
	u.Stages, u.TypedFiles, u.SnapshotFromMemory = r.Stages, r.TypedFiles, r.SnapshotFromMemory
	if u.TypedScanTime > 0 {
		u.TypedRatio = u.Time.Seconds() / u.TypedScanTime.Seconds()
	}
	mb := float64(rep.DataBytes) / 1e6
	u.MBps = mb / u.Time.Seconds()
	if u.ScanTime > 0 {
		u.ScanMBps = mb / u.ScanTime.Seconds()
		u.Ratio = u.Time.Seconds() / u.ScanTime.Seconds()
	}
	u.IndexSize = dirSize(idxDir)
	return nil
}

// coldLocate times cold locates: each on a new FileIndex, so the query
// loads the view of the table version first.
func coldLocate(ctx context.Context, ix *index.Index, root *store.Counting, keys *keyGen, n, queries int) (LocateReport, error) {
	out := LocateReport{Keys: n, Cold: true, Queries: queries}
	err := timeLocates(ctx, &out, root, keys, func() *fileindex.FileIndex {
		runtime.GC()
		return fileindex.New(ix, fileindex.Options{})
	})
	return out, err
}

// warmLocate times locates on fi after one untimed query has loaded
// the view.
func warmLocate(ctx context.Context, fi *fileindex.FileIndex, root *store.Counting, keys *keyGen, n, queries int) (LocateReport, error) {
	out := LocateReport{Keys: n, Queries: queries}
	if _, err := fi.Locate(ctx, fileindex.Query{"user_id": keys.query(n)}); err != nil {
		return out, err
	}
	err := timeLocates(ctx, &out, root, keys, func() *fileindex.FileIndex { return fi })
	return out, err
}

// timeLocates runs out.Queries locates of out.Keys keys, each on the
// FileIndex that handle returns (untimed), and records latency, requests,
// bytes and files located.
func timeLocates(ctx context.Context, out *LocateReport, root *store.Counting, keys *keyGen, handle func() *fileindex.FileIndex) error {
	var lats []time.Duration
	for range out.Queries {
		q := fileindex.Query{"user_id": keys.query(out.Keys)}
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

func (l *LocateReport) finish(lats []time.Duration) {
	q := quantiles(lats)
	l.P50, l.P99 = q.P50, q.P99
	if n := float64(len(lats)); n > 0 {
		l.Requests /= n
		l.Bytes /= n
		l.Files /= n
	}
}

// keySchema is the keys' schema: one user_id column.
var keySchema = &schema.Struct{Fields: []schema.Field{{Name: "user_id", Type: schema.Long, Nullable: true}}}

// measureJoin joins users with the lake through fi.Join and through
// DuckDB reading every file, draining both results into Go rows, and
// checks that they return the same rows (drainHash's multiset hash).
// Short joins are noisy on a shared machine, so the pair is repeated,
// alternating, while it takes under joinBudget (at least joinMinRuns, at
// most joinRuns times), and each side reports its quantiles.
//
// Each join starts after a garbage collection, outside its timing: the
// process's CPU time during a join would otherwise include collecting the
// garbage the other side's join left (DuckDB's rows converted to Go
// values are most of it), and which join pays for it depends on when the
// collector happens to start.
//
// With a profile path, the CPU profile of our first join is written there.
func measureJoin(ctx context.Context, fi *fileindex.FileIndex, data *countingWrap, users []int64, paths []string, skipDuck bool, profile string, loc fileindex.RowLocator) (JoinReport, error) {
	out := JoinReport{Keys: len(users), DuckFiles: len(paths)}
	rows := make([][]any, len(users))
	for i, u := range users {
		rows[i] = []any{u}
	}
	var ours, duck, oursCPU, duckCPU []time.Duration
	start := time.Now()
	for len(ours) < joinRuns && (len(ours) < joinMinRuns || time.Since(start) < joinBudget) {
		before := data.snapshot()
		stop := func() {}
		if profile != "" && len(ours) == 0 {
			f, err := os.Create(profile)
			if err != nil {
				return out, err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return out, err
			}
			stop = func() { pprof.StopCPUProfile(); f.Close() }
		}
		runtime.GC()
		t0, c0 := time.Now(), cpuTime()
		r, err := fi.Join(ctx, fileindex.RowsSource(keySchema, rows), []string{"user_id"}, fileindex.Inner, fileindex.JoinOptions{Rows: loc})
		if err != nil {
			return out, err
		}
		n, sum, err := drainHash(ctx, r.Next)
		out.Files = len(r.Files())
		out.Stats = r.Stats()
		r.Close()
		stop()
		if err != nil {
			return out, err
		}
		ours, oursCPU = append(ours, time.Since(t0)), append(oursCPU, cpuTime()-c0)
		out.Rows = n
		out.Bytes = data.snapshot().Read.Bytes - before.Read.Bytes
		if skipDuck {
			continue
		}
		runtime.GC()
		t0, c0 = time.Now(), cpuTime()
		dn, duckSum, err := duckJoin(ctx, rows, paths)
		if err != nil {
			return out, err
		}
		duck, duckCPU = append(duck, time.Since(t0)), append(duckCPU, cpuTime()-c0)
		if dn != n || duckSum != sum {
			return out, fmt.Errorf("fileindex bench: join of %d users: file index %d rows (hash %x), DuckDB %d rows (hash %x)",
				len(users), n, sum, dn, duckSum)
		}
	}
	out.Runs = len(ours)
	out.Ours = Latency{Wall: quantiles(ours), CPU: quantiles(oursCPU)}
	out.Duck = Latency{Wall: quantiles(duck), CPU: quantiles(duckCPU)}
	return out, nil
}

// joinMinRuns, joinRuns and joinBudget bound the repetitions of one key
// count's joins: every pair runs at least 3 times, short ones (a one-key
// join and DuckDB's full scan take well under a second together) up to
// 20 times, for a p90 and p99 that are not just the slowest of a few.
const (
	joinMinRuns = 3
	joinRuns    = 20
	joinBudget  = 20 * time.Second
)

// cpuTime is the process's user and system CPU time: on a machine shared
// with other work, wall times depend on the load, CPU times much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
