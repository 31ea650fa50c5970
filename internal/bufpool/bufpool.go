// Package bufpool recycles byte buffers by size class for the read paths
// that fetch and decompress pages (the row index's lookups, pqrow's
// selective reads): a light key of an arrival-order lake reads ≈3 MB in
// ≈40 ranges and decompresses ≈100 pages, a one-key join ≈5 MB of pages,
// and allocating them zeroed each time cost CPU and made the collector scan
// the caches' live heap every few dozen lookups.
//
// The pools are process-wide on purpose: a buffer holds no state, and one
// set of pools lets every reader reuse what another gave back.
package bufpool

import (
	"math/bits"
	"sync"
)

// MaxSize is the largest buffer the pools hold (32 MiB); larger ones are
// left to the collector. A hot key reads whole column chunks as one range
// each, and pyarrow's defaults make a text column's chunk 10 MB and more:
// at 8 MiB those buffers were allocated afresh for every file (0.55 of the
// 1.49 GB a 76k-row key allocated on the pyarrow lake), faulting their pages
// in again each time.
const MaxSize = 1 << (len(pools) - 1)

// pools[k] holds buffers of capacity 1<<k.
var pools [26]sync.Pool

// Get returns a buffer of length n (≥ 0), of capacity the next power of two
// when n ≤ MaxSize, from the pools when one is there.
func Get(n int) []byte {
	k := bits.Len(uint(max(n, 1) - 1))
	if k >= len(pools) {
		return make([]byte, n)
	}
	if v, ok := pools[k].Get().(*[]byte); ok {
		return (*v)[:n]
	}
	return make([]byte, n, 1<<k)
}

// Put gives b back for reuse; nothing may read or write b afterwards. A
// buffer whose capacity is not a pool's (allocated elsewhere, or grown by
// its user) is left to the collector.
func Put(b []byte) {
	k := bits.Len(uint(cap(b) - 1))
	if cap(b) == 0 || cap(b) != 1<<k || k >= len(pools) {
		return
	}
	b = b[:0]
	pools[k].Put(&b)
}
