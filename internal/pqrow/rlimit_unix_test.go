//go:build unix

package pqrow

import (
	"syscall"
	"testing"
)

// capAddressSpace caps this process's address space at n bytes, so an
// unbounded allocation dies with a fatal out-of-memory.
func capAddressSpace(t *testing.T, n uint64) {
	lim := syscall.Rlimit{Cur: n, Max: n}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		t.Fatal(err)
	}
}
