package rowindexbench

import (
	"bytes"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"sync"
	"time"
)

// rssSampler samples the process's resident memory (/proc/self/status) and
// the Go runtime's memory classes (runtime/metrics) every few milliseconds
// and keeps the sample of the highest VmRSS, so that a build's peak RSS
// (what /usr/bin/time -v reports) can be split into the Go heap, the
// runtime's other memory, memory the runtime has released but the kernel
// still counts, and file pages (ARIADNE_BENCH_RSS=1).
type rssSampler struct {
	phase func() string
	stop  chan struct{}
	done  sync.WaitGroup

	mu   sync.Mutex
	peak rssSample
}

// rssSample is one sample: kernel figures in bytes, and the runtime's.
type rssSample struct {
	at                     time.Duration
	phase                  string
	rss, anon, file, shmem int64
	goTotal, released      uint64 // runtime: mapped, returned to the OS
	heapObjects, heapFree  uint64 // live+garbage objects; free spans not released
	heapUnused, other      uint64 // unused parts of spans; stacks, metadata and the rest
	gcGoal                 uint64
}

var rssMetrics = []string{
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/unused:bytes",
	"/gc/heap/goal:bytes",
}

// startRSSSampler samples every interval; with a trace path, it also
// writes every sample there (tab-separated, MiB).
func startRSSSampler(every time.Duration, phase func() string, trace string) (*rssSampler, error) {
	s := &rssSampler{phase: phase, stop: make(chan struct{})}
	var tw *os.File
	if trace != "" {
		f, err := os.Create(trace)
		if err != nil {
			return nil, err
		}
		tw = f
		fmt.Fprintln(tw, "s\tphase\trss\tanon\tfile\tgo\theap_objects\theap_free\treleased\tgc_goal")
	}
	t0 := time.Now()
	samples := make([]metrics.Sample, len(rssMetrics))
	for i, n := range rssMetrics {
		samples[i].Name = n
	}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		if tw != nil {
			defer tw.Close()
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
			b, err := os.ReadFile("/proc/self/status")
			if err != nil {
				return
			}
			x := rssSample{at: time.Since(t0), rss: statusField(b, "VmRSS"), anon: statusField(b, "RssAnon"),
				file: statusField(b, "RssFile"), shmem: statusField(b, "RssShmem")}
			s.mu.Lock()
			higher := x.rss > s.peak.rss
			s.mu.Unlock()
			if !higher && tw == nil {
				continue
			}
			metrics.Read(samples)
			x.goTotal, x.released = samples[0].Value.Uint64(), samples[1].Value.Uint64()
			x.heapObjects, x.heapFree, x.heapUnused = samples[2].Value.Uint64(), samples[3].Value.Uint64(), samples[4].Value.Uint64()
			x.other = x.goTotal - x.released - x.heapObjects - x.heapFree - x.heapUnused
			x.gcGoal = samples[5].Value.Uint64()
			x.phase = s.phase()
			if tw != nil {
				m := func(n uint64) float64 { return float64(n) / (1 << 20) }
				fmt.Fprintf(tw, "%.2f\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\n", x.at.Seconds(), x.phase,
					m(uint64(x.rss)), m(uint64(x.anon)), m(uint64(x.file)), m(x.goTotal-x.released), m(x.heapObjects), m(x.heapFree), m(x.released), m(x.gcGoal))
			}
			if higher {
				s.mu.Lock()
				s.peak = x
				s.mu.Unlock()
			}
		}
	}()
	return s, nil
}

// end stops sampling and describes the peak.
func (s *rssSampler) end() string {
	close(s.stop)
	s.done.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.peak
	mib := func(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }
	return fmt.Sprintf("peak VmRSS %s MiB at %.1f s (phase %s): RssAnon %s, RssFile %s, RssShmem %s; Go mapped-released %s (heap objects %s, free %s, unused %s, other %s; released %s), GC goal %s",
		mib(p.rss), p.at.Seconds(), p.phase, mib(p.anon), mib(p.file), mib(p.shmem),
		mib(int64(p.goTotal-p.released)), mib(int64(p.heapObjects)), mib(int64(p.heapFree)), mib(int64(p.heapUnused)),
		mib(int64(p.other)), mib(int64(p.released)), mib(int64(p.gcGoal)))
}

// statusField is a "Name: N kB" field of /proc/self/status in bytes.
func statusField(b []byte, name string) int64 {
	i := bytes.Index(b, []byte("\n"+name+":"))
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+len(name)+2:])
	if len(f) < 2 {
		return 0
	}
	kb, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return kb << 10
}
