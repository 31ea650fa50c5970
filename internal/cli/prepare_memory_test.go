package cli

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
)

// TestPrepareMemory: prepare's Go memory limit and sort budget are its
// process budget less the binary's resident file pages (code and static
// data, which the Go limit does not count), so Go memory at the limit plus
// those pages stays within --memory; the previous limit comes back after;
// with GOMEMLIMIT set neither is changed.
func TestPrepareMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/status")
	}
	const budget = 1 << 30
	prev := debug.SetMemoryLimit(-1)
	heap, restore := prepareMemory(budget)
	limit := debug.SetMemoryLimit(-1)
	files := rssFile(t)
	if files <= 0 || heap != limit || limit+files > budget || heap < budget/2 {
		t.Fatalf("budget %d: heap %d, Go limit %d, resident file pages %d (limit + pages must be ≤ the budget)", int64(budget), heap, limit, files)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Fatalf("limit %d after restore, was %d", got, prev)
	}
	t.Setenv("GOMEMLIMIT", "2GiB")
	if heap, restore := prepareMemory(budget); heap != budget || debug.SetMemoryLimit(-1) != prev {
		t.Fatalf("with GOMEMLIMIT set: heap %d, limit changed to %d", heap, debug.SetMemoryLimit(-1))
	} else {
		restore()
	}
}

// rssFile is this process's resident file-backed memory (RssFile).
func rssFile(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("\nRssFile:"))
	if i < 0 {
		t.Fatal("no RssFile in /proc/self/status")
	}
	f := bytes.Fields(b[i+len("\nRssFile:"):])
	kb, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return kb << 10
}
