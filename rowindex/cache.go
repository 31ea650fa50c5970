package rowindex

import (
	"container/list"
	"sync"
)

// DefaultCacheBytes is the default memory budget of a RowIndex: three
// quarters for parsed data-file footers and offset indexes, dictionary pages,
// fragment footers and compressed fragment row groups, one quarter for
// decoded fragment row groups. For the benchmark lake (1 GB, 120 files of
// one row group × 5 columns) metadata is ≈ 120 × (4 KiB footer × 4 parsed +
// 5 offset indexes × ~2 KiB) ≈ 3 MiB and the compressed index ≈ 30–45 MiB,
// so 192 MiB keeps the index of a ~5 GB lake in memory; the decoded quarter
// (64 MiB ≈ 650,000 entries ≈ 400 groups) holds the hot buckets.
const DefaultCacheBytes = 256 << 20

// MaxAutoCacheBytes caps the budget AutoCacheBytes gives one row index:
// past it, set Options.CacheBytes to what the machine can hold.
const MaxAutoCacheBytes = 4 << 30

// autoCacheSlack is what AutoCacheBytes adds for data file footers and
// offset indexes (≈3 MiB per 1 GB of Parquet measured) and fragment
// footers.
const autoCacheSlack = 32 << 20

// AutoCacheBytes is the cache budget a row index version needs when none
// is set: large enough that its compressed fragments, the data files'
// metadata and the dictionaries lookups decode (FileEntry.DictBytes, and
// half again for the dictionary page as fetched, kept beside it) fit in
// the three quarters of the budget kept for them, so that a warmed server
// reads neither index nor dictionary again, the last quarter holding
// decoded fragment groups; at least DefaultCacheBytes, at most
// MaxAutoCacheBytes. For the 1 GB benchmark lake (253 MB of fragments, no
// dictionaries) it is ≈ 380 MiB; for 256 MB of files written with
// pyarrow's defaults (20 MB of fragments, ≈315 MB of dictionaries) ≈ 700 MiB.
func AutoCacheBytes(m *Manifest) int64 {
	var need int64
	for _, f := range m.Fragments {
		need += f.Size
	}
	for _, f := range m.Files {
		// A manifest's word, bounded: a negative or huge DictBytes
		// cannot wrap the sum.
		need += min(max(f.DictBytes, 0), MaxAutoCacheBytes) * 3 / 2
		need = min(need, MaxAutoCacheBytes)
	}
	want := (need + autoCacheSlack) * 4 / 3
	return min(max(want, DefaultCacheBytes), MaxAutoCacheBytes)
}

// DefaultPageCacheBytes is the default budget of the decoded data-page
// cache: a decoded value costs 24 bytes plus its bytes, ≈3× its page's
// uncompressed size, so 64 MiB holds ≈1,000 pages of 16 KiB, the pages of
// the few hundred keys an online service asks for again (a user paging
// through their history, an agent's follow-up questions).
const DefaultPageCacheBytes = 64 << 20

// pageCacheMaxPages is the most pages a lookup batch may decode and still
// fill the page cache: larger lookups (a hot key's scan) would flush it.
const pageCacheMaxPages = 256

// learnMaxPages is the most pages a lookup batch may plan and still learn
// the shapes of the pages it reads whole (learnShape): a light key's
// (≤ 1,000 rows: a few thousand pages at most) learns them for the lookups
// after it. A hot key's batches (a few hundred pages each) learn too: the
// cost, walking a SNAPPY stream's tags once more, is paid once per page
// (the second time it is read whole) and was ≈10 % of one top-key lookup;
// skipping it made the light lookups after such keys read 1.4–1.6× the
// bytes (stop 26).
const learnMaxPages = 4096

// cache is an LRU of values charged by their size in bytes. It is safe for
// concurrent use. Concurrent misses on one key may load it twice; the second
// Put wins (loads are pure, so both values are equivalent).
type cache struct {
	mu     sync.Mutex
	budget int64
	used   int64
	ll     *list.List // front = most recently used
	items  map[any]*list.Element
}

type cacheItem struct {
	key  any
	val  any
	size int64
}

func newCache(budget int64) *cache {
	if budget <= 0 {
		budget = DefaultCacheBytes
	}
	return &cache{budget: budget, ll: list.New(), items: map[any]*list.Element{}}
}

// get returns the value under key and marks it used.
func (c *cache) get(key any) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*cacheItem).val, true
}

// put stores val under key, charged size bytes, evicting the least recently
// used values beyond the budget. A value larger than the whole budget is not
// kept.
func (c *cache) put(key, val any, size int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		it := e.Value.(*cacheItem)
		c.used += size - it.size
		it.val, it.size = val, size
		c.ll.MoveToFront(e)
	} else {
		if size > c.budget {
			return
		}
		c.items[key] = c.ll.PushFront(&cacheItem{key: key, val: val, size: size})
		c.used += size
	}
	for c.used > c.budget {
		e := c.ll.Back()
		it := e.Value.(*cacheItem)
		c.ll.Remove(e)
		delete(c.items, it.key)
		c.used -= it.size
	}
}

// putIfRoom stores val under key, charged size bytes, only if it fits
// beside what the cache holds (it evicts nothing), as the least recently
// used value; it reports whether it stored it.
func (c *cache) putIfRoom(key, val any, size int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[key]; ok || c.used+size > c.budget {
		return false
	}
	// Least recently used: what lookups ask for stays when it must go.
	c.items[key] = c.ll.PushBack(&cacheItem{key: key, val: val, size: size})
	c.used += size
	return true
}

// room returns the bytes the cache can take without evicting.
func (c *cache) room() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.budget - c.used
}

// stats returns the bytes used and the number of entries.
func (c *cache) stats() (used int64, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used, len(c.items)
}

// clear drops everything.
func (c *cache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ll.Init()
	c.items = map[any]*list.Element{}
	c.used = 0
}
