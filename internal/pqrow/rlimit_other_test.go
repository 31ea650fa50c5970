//go:build !unix

package pqrow

import "testing"

// capAddressSpace skips the test: there is no RLIMIT_AS to cap.
func capAddressSpace(t *testing.T, n uint64) {
	t.Skip("no address-space limit on this system")
}
