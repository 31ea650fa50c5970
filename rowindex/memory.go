package rowindex

import (
	"bytes"
	"os"
	"runtime/metrics"
	"strconv"
)

// HeapBudget returns the part of a process-wide memory budget that a build
// run as the process's only work (add-row-index) may give to the Go heap
// (WithMemory, and the Go memory limit): the budget less the resident memory
// the Go runtime does not manage — the binary's code and static data and C
// libraries (DuckDB's: ≈60 MB of the ariadne binary's ≈67 MB at start).
// Without it, a build that kept its heap within the budget still peaked
// above it in resident memory (557.6 MB for 512 MiB). A further
// 1/heapMarginShare of the budget is left for what the Go memory limit,
// a soft limit, lets past it: with the heap's demand at the limit the
// runtime keeps its memory at the limit (returning free spans only as it
// must), and the binary's resident pages grow as the run touches more of
// its code (a partitioned 10× build peaked at 511–513 MiB for 512, its Go
// memory at the limit and RssFile 2 MB over its start). It never returns
// less than half the budget.
func HeapBudget(budget int64) int64 {
	return max(budget-nonGoResident()-budget/heapMarginShare, budget/2)
}

// heapMarginShare: HeapBudget keeps 1/heapMarginShare of the budget (16 MiB
// of 512) out of the Go heap's share.
const heapMarginShare = 32

// nonGoResident estimates the resident bytes of this process outside the Go
// runtime's memory: its resident file pages (RssFile in /proc/self/status:
// the binary's code and data; the Go heap is anonymous memory), or, when
// more, its RSS less what the runtime has mapped and not returned to the OS
// (which also counts C allocations, but only while the Go heap is small and
// mostly resident: at a process's start). It is 0 where /proc is not
// available.
func nonGoResident() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	field := func(name string) int64 {
		i := bytes.Index(b, []byte("\n"+name+":"))
		if i < 0 {
			return 0
		}
		f := bytes.Fields(b[i+len(name)+2:])
		if len(f) < 2 || string(f[1]) != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	rss, files := field("VmRSS"), field("RssFile")
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return files
	}
	goResident := int64(s[0].Value.Uint64() - s[1].Value.Uint64())
	return max(rss-goResident, files)
}
