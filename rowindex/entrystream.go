package rowindex

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"errors"
	"runtime"
	"sort"
	"sync"
)

// entryStream yields the entries of a key (or key range) in lookup order
// (compareEntries), merging the fragments' streams. Each fragment's
// candidate row groups (those whose directory range holds the key) are
// decoded only when the merge reaches them, so a lookup with a limit decodes
// the first groups of each fragment and stops, whatever the key's size.
// Entries of removed files are dropped here, before anything is read from
// them.
type entryStream struct {
	ri     *RowIndex
	ctx    context.Context
	m      *meter
	kind   Kind
	lo, hi []byte
	bucket int32 // the key's bucket on a hash row index, else -1
	gone   tombstones
	h      fragHeap
}

// fragCursor is one fragment's position in an entryStream.
type fragCursor struct {
	fr     *FragmentEntry
	groups []int       // candidate row groups, in order
	next   int         // index in groups of the next group to decode
	ready  []groupLoad // decoded ahead (prefetch), by position in groups
	buf    []entry     // the current part of the current group's matching entries
	pos    int
	rest   residentRun // the current group's entries not yet in buf
}

// groupLoad is what load returns of a group: its matching entries, and for
// a resident group's key with many entries, those past es still to unpack.
type groupLoad struct {
	es     []entry
	rest   residentRun
	loaded bool
}

// head returns the cursor's current entry.
func (c *fragCursor) head() *entry { return &c.buf[c.pos] }

type fragHeap []*fragCursor

func (h fragHeap) Len() int           { return len(h) }
func (h fragHeap) Less(i, j int) bool { return compareEntries(h[i].head(), h[j].head()) < 0 }
func (h fragHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *fragHeap) Push(x any)        { *h = append(*h, x.(*fragCursor)) }
func (h *fragHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// prefetchAll: decode every candidate group up front, concurrently (the
// lookup will read the key's every entry); otherwise the first group of
// each fragment is decoded up front and the rest on demand.
func (ri *RowIndex) newEntryStream(ctx context.Context, m *meter, man *Manifest, lo, hi []byte, isRange, prefetchAll bool) (*entryStream, error) {
	s := &entryStream{ri: ri, ctx: ctx, m: m, kind: man.Kind, lo: lo, hi: hi, bucket: -1, gone: man.tombstones()}
	if !isRange && man.Kind == KindHash {
		s.bucket = man.BucketHash.bucket(lo)
	}
	var cursors []*fragCursor
	for i := range man.Fragments {
		fr := &man.Fragments[i]
		c := &fragCursor{fr: fr}
		groups := fr.Groups
		first := 0
		if s.bucket >= 0 {
			// A fragment's groups are in bucket order (they are cut from
			// entries in fragment order): the key's bucket is found by
			// binary search, not by a walk over every group (≈4,000 on the
			// 1 GB lake, per lookup).
			first = sort.Search(len(groups), func(i int) bool { return groups[i].BucketHi >= s.bucket })
			last := first
			for last < len(groups) && groups[last].BucketLo <= s.bucket {
				last++
			}
			groups = groups[:last]
		} else if man.Kind == KindSorted && lo != nil {
			// A sorted fragment's groups are in key order (cut from its
			// sorted entries): the first that may hold lo by binary
			// search, and none past hi.
			first = sort.Search(len(groups), func(i int) bool { return bytes.Compare(groups[i].KeyHi, lo) >= 0 })
		}
		for gi := first; gi < len(groups); gi++ {
			g := &groups[gi]
			if s.bucket >= 0 {
				if s.bucket < g.BucketLo || s.bucket > g.BucketHi {
					continue
				}
			} else if man.Kind == KindSorted {
				if hi != nil && bytes.Compare(g.KeyLo, hi) > 0 {
					break
				}
				if lo != nil && bytes.Compare(g.KeyHi, lo) < 0 {
					continue
				}
			}
			c.groups = append(c.groups, gi)
		}
		if len(c.groups) > 0 {
			c.ready = make([]groupLoad, len(c.groups))
			cursors = append(cursors, c)
		}
	}
	// One round of reads: every fragment's footer (one load each:
	// concurrent group loads of a cold fragment would each miss and read
	// it) and the bytes of the groups decoded ahead; then the groups are
	// decoded, concurrently.
	type job struct {
		c *fragCursor
		i int
	}
	var jobs []job
	for _, c := range cursors {
		n := 1
		if prefetchAll {
			n = len(c.groups)
		}
		for i := range n {
			jobs = append(jobs, job{c, i})
		}
	}
	point := lo != nil && bytes.Equal(lo, hi)
	if point && allResident(ri, cursors) {
		// Every candidate group is answered from memory (resident.go):
		// nothing to read, and each load is a search of a few
		// microseconds. Done here, on this goroutine: a goroutine per
		// fragment made the lookup wait for a parked thread to wake (a
		// light lookup after idle time or another engine's query).
		ri.residentStreams.Add(1)
		for _, j := range jobs {
			var err error
			if j.c.ready[j.i], err = s.load(j.c.fr, j.c.groups[j.i]); err != nil {
				return nil, err
			}
		}
		return s.start(cursors)
	}
	errs := make([]error, len(cursors)+len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxConcurrentReads)
	run := func(k int, f func() error) {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[k] = f()
		}()
	}
	// What the cache holds (a warm index: all of it) is not fetched: a
	// goroutine per cache hit cost more than a light lookup's decoding.
	cached := func(k any) bool {
		_, ok := ri.cache.get(k)
		if ok {
			m.hits.Add(1)
		}
		return ok
	}
	for i, c := range cursors {
		if !(point && c.resident(ri)) && !cached(fragMetaKey{c.fr.Path}) {
			run(i, func() error { _, err := ri.fragmentMeta(ctx, m, c.fr); return err })
		}
	}
	for k, j := range jobs {
		if point && ri.isResident(j.c.fr, j.c.groups[j.i]) {
			continue // answered from memory (resident.go): nothing to read
		}
		if !cached(fragGroupKey{j.c.fr.Path, j.c.groups[j.i]}) {
			run(len(cursors)+k, func() error { _, err := ri.groupBytes(ctx, m, j.c.fr, j.c.groups[j.i]); return err })
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sem = make(chan struct{}, runtime.GOMAXPROCS(0)) // decoding is CPU-bound
	decode := func(k int) {
		j := jobs[k]
		j.c.ready[j.i], errs[k] = s.load(j.c.fr, j.c.groups[j.i])
	}
	for k := range jobs[:max(len(jobs)-1, 0)] {
		run(k, func() error { decode(k); return errs[k] })
	}
	if len(jobs) > 0 {
		decode(len(jobs) - 1) // the last on this goroutine
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s.start(cursors)
}

// resident reports whether every candidate group of c is resident.
func (c *fragCursor) resident(ri *RowIndex) bool {
	for _, gi := range c.groups {
		if !ri.isResident(c.fr, gi) {
			return false
		}
	}
	return true
}

// allResident reports whether every candidate group of every cursor is
// resident.
func allResident(ri *RowIndex, cursors []*fragCursor) bool {
	for _, c := range cursors {
		if !c.resident(ri) {
			return false
		}
	}
	return true
}

// start moves each cursor to its first matching entry and orders them.
func (s *entryStream) start(cursors []*fragCursor) (*entryStream, error) {
	s.h = make(fragHeap, 0, len(cursors))
	for _, c := range cursors {
		if err := s.advance(c); err != nil {
			return nil, err
		}
		if c.pos < len(c.buf) {
			s.h = append(s.h, c)
		}
	}
	heap.Init(&s.h)
	return s, nil
}

// load decodes one group and returns its entries in the key range. A
// point lookup on a resident group unpacks its key's entries a part at a
// time (residentRun), when no file is removed (dropRemoved looks at a key's
// entries together): a limited lookup of a hot key whose every group holds
// thousands of its entries unpacks the few it reads.
func (s *entryStream) load(fr *FragmentEntry, gi int) (groupLoad, error) {
	if s.lo != nil && bytes.Equal(s.lo, s.hi) {
		if len(s.gone) == 0 {
			if g, ok := s.ri.resident.get(fragDecodedKey{fr.Path, gi}); ok {
				s.m.hits.Add(1)
				run := g.run(s.lo, max(s.bucket, 0))
				return groupLoad{es: run.take(), rest: run, loaded: true}, nil
			}
		}
		if es, ok, err := s.ri.groupKey(s.ctx, s.m, fr, gi, s.lo); ok || err != nil {
			return groupLoad{es: dropRemoved(es, s.gone), loaded: true}, err // point lookup (pointread.go)
		}
	}
	es, err := s.ri.group(s.ctx, s.m, fr, gi)
	if err != nil {
		return groupLoad{}, err
	}
	from := 0
	if s.lo != nil {
		from = sort.Search(len(es), func(k int) bool {
			return cmp.Or(cmp.Compare(es[k].Bucket, max(s.bucket, 0)), bytes.Compare(es[k].Key, s.lo)) >= 0
		})
	}
	to := from
	for to < len(es) {
		e := &es[to]
		if s.bucket >= 0 && e.Bucket != s.bucket || s.hi != nil && bytes.Compare(e.Key, s.hi) > 0 {
			break
		}
		to++
	}
	return groupLoad{es: dropRemoved(es[from:to:to], s.gone), loaded: true}, nil
}

// advance moves c to its next group holding a matching entry (buf empty when
// there is none).
func (s *entryStream) advance(c *fragCursor) error {
	c.buf, c.pos = nil, 0
	if c.buf = c.rest.take(); len(c.buf) > 0 {
		return nil // the current group's next part
	}
	for c.next < len(c.groups) {
		i := c.next
		c.next++
		ld := c.ready[i]
		c.ready[i] = groupLoad{}
		if !ld.loaded {
			var err error
			if ld, err = s.load(c.fr, c.groups[i]); err != nil {
				return err
			}
		}
		if c.buf, c.rest = ld.es, ld.rest; len(c.buf) > 0 {
			return nil
		}
	}
	return nil
}

// next returns the next entry in lookup order; ok is false at the end. The
// entry may be shared with the cache: the caller must not modify it.
func (s *entryStream) next() (e entry, ok bool, err error) {
	if len(s.h) == 0 {
		return entry{}, false, nil
	}
	c := s.h[0]
	e = *c.head()
	c.pos++
	if c.pos == len(c.buf) {
		if err := s.advance(c); err != nil {
			return entry{}, false, err
		}
	}
	if c.pos < len(c.buf) {
		heap.Fix(&s.h, 0)
	} else {
		heap.Pop(&s.h)
	}
	return e, true, nil
}
