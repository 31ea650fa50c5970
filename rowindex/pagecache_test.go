package rowindex

import (
	"hash/maphash"
	"testing"
)

// TestPageCacheAdmitsCollidingPages: pages of one lookup that map to the
// same set of the admission filter are each admitted on their second
// decode (with one slot per set, they evicted each other's mark on every
// decode and were never cached: TestPageCache failed about one run in 20).
func TestPageCacheAdmitsCollidingPages(t *testing.T) {
	pc := newPageCache(0)
	sets := uint64(len(pc.seen.seen) / seenWays)
	setOf := func(k pageKey) uint64 { return (maphash.Comparable(pc.seen.seed, k) | 1) & (sets - 1) }
	// seenWays pages in one set: a set holds them all.
	var keys []pageKey
	want := setOf(pageKey{id: 1})
	for p := 0; len(keys) < max(seenWays, 2); p++ {
		if k := (pageKey{id: 1, page: p}); setOf(k) == want {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		if pc.admit(k) {
			t.Fatalf("page %+v admitted on its first decode", k)
		}
	}
	for _, k := range keys {
		if !pc.admit(k) {
			t.Fatalf("page %+v, decoded before with %d others of its set, not admitted on its second decode", k, len(keys)-1)
		}
	}
	pc.clear()
	if pc.admit(keys[0]) {
		t.Fatal("a cleared filter admitted a page")
	}
}
