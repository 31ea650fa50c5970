package rowindex

import (
	"runtime"
	"testing"
)

// TestHeapBudget: the heap budget is the budget less the process's
// resident memory outside the Go runtime (at least a test binary's resident
// code: more than 0 on Linux) and a margin, and at least half the budget; allocating Go
// memory does not move it much (it is not counted as outside).
func TestHeapBudget(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/statm")
	}
	const budget = 512 << 20
	h := HeapBudget(budget)
	if h >= budget || h < budget/2 {
		t.Fatalf("HeapBudget(512 MiB) = %d", h)
	}
	// The margin for a soft memory limit (the estimate moves by a few
	// pages between calls).
	if out := nonGoResident(); h > budget-out-budget/heapMarginShare+1<<20 {
		t.Fatalf("HeapBudget(512 MiB) = %d: more than the budget less %d outside and the margin", h, out)
	}
	before := nonGoResident()
	big := make([]byte, 64<<20)
	for i := range big {
		big[i] = 1
	}
	after := nonGoResident()
	runtime.KeepAlive(big)
	if d := after - before; d > 16<<20 || d < -16<<20 {
		t.Fatalf("64 MiB of Go memory moved the outside estimate by %d bytes (%d -> %d)", d, before, after)
	}
	if before > 1<<19 && HeapBudget(1<<20) != 1<<19 {
		t.Fatalf("HeapBudget(1 MiB) = %d, want half of it", HeapBudget(1<<20))
	}
}
