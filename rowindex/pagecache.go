package rowindex

import (
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// pageCache is the cache of decoded data pages (Options.PageCacheBytes)
// with an admission filter: a page enters it only when it is decoded a
// second time while the filter still remembers the first. Light keys of a
// large lake in arrival order touch ≈100 pages each, nearly all of them
// never asked for again; copying each into the cache was ≈75 % of a light
// lookup's allocation and its garbage collection, for a hit ratio near zero
// on the 1 GB benchmark lake. Pages that are asked for again (a user paging
// through their history, a hot key's few pages) are admitted on their
// second decode and served from then on.
type pageCache struct {
	*cache
	seen *seenFilter // pages decoded recently
}

// seenFilter remembers the hash of recently seen pages in sets of seenWays
// slots (set-associative: a page may sit in any slot of its set, so two
// pages of one lookup that map to the same set do not evict each other's
// mark on every decode and stay unadmitted for good, as they did with one
// slot per set). A newer page overwrites an older one in a full set:
// forgetting only delays a second sighting. 0 is an empty slot. It is safe
// for concurrent use.
type seenFilter struct {
	seen []atomic.Uint64
	seed maphash.Seed
}

// seenWays is the number of slots of a set of seenFilter.
const seenWays = 4

// newSeenFilter returns a filter of about slots slots (a power of two, at
// least seenWays).
func newSeenFilter(slots int64) *seenFilter {
	n := 1 << (63 - bits.LeadingZeros64(uint64(max(slots, seenWays))))
	return &seenFilter{seen: make([]atomic.Uint64, n), seed: maphash.MakeSeed()}
}

// has reports whether page k was seen before, recently, without
// remembering it.
func (f *seenFilter) has(k pageKey) bool {
	h := maphash.Comparable(f.seed, k) | 1
	sets := uint64(len(f.seen) / seenWays)
	set := f.seen[(h&(sets-1))*seenWays:][:seenWays]
	for i := range set {
		if set[i].Load() == h {
			return true
		}
	}
	return false
}

// again reports whether page k was seen before, recently. Otherwise it
// remembers k and reports false.
func (f *seenFilter) again(k pageKey) bool {
	h := maphash.Comparable(f.seed, k) | 1
	sets := uint64(len(f.seen) / seenWays)
	set := f.seen[(h&(sets-1))*seenWays:][:seenWays]
	free := -1
	for i := range set {
		switch v := set[i].Load(); {
		case v == h:
			return true
		case v == 0 && free < 0:
			free = i
		}
	}
	if free < 0 {
		free = int(h>>56) % seenWays // a full set: the slot the hash names
	}
	set[free].Store(h)
	return false
}

// clear forgets every page.
func (f *seenFilter) clear() {
	for i := range f.seen {
		f.seen[i].Store(0)
	}
}

// pagesPerSeenSlot sizes the filter: one slot per this many bytes of the
// cache's budget, so it remembers ≈4× the 16 KiB pages the cache holds
// (pages decoded once must still be remembered when asked for again after
// the cache's worth of other pages).
const pagesPerSeenSlot = 4 << 10

func newPageCache(budget int64) *pageCache {
	return &pageCache{cache: newCache(budget), seen: newSeenFilter(min(max(budget/pagesPerSeenSlot, 1<<12), 1<<20))}
}

// admit reports whether page k may be added to the cache: it was decoded
// before, recently. Otherwise it remembers k and reports false.
func (pc *pageCache) admit(k pageKey) bool { return pc.seen.again(k) }

// clear drops the cached pages and what the filter remembers.
func (pc *pageCache) clear() {
	pc.cache.clear()
	pc.seen.clear()
}
