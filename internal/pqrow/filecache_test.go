package pqrow

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
)

// countingAt counts the reads and bytes that go through it.
type countingAt struct {
	r            *bytes.Reader
	reads, bytes atomic.Int64
}

func newCountingAt(b []byte) *countingAt { return &countingAt{r: bytes.NewReader(b)} }

func (c *countingAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	n, err := c.r.ReadAt(p, off)
	c.bytes.Add(int64(n))
	return n, err
}

// readBack reads f whole (Rows) and the rows 1, 5 and 99 of each row
// group (ReadRowsAt).
func readBack(t *testing.T, f *File) ([]Row, []Row) {
	t.Helper()
	ctx := context.Background()
	var all []Row
	for r, err := range f.Rows(ctx, selSchema, ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, r)
	}
	var some []Row
	for g := range f.NumRowGroups() {
		rows, err := f.ReadRowsAt(ctx, selSchema, ReadOptions{}, g, []int64{1, 5, 99})
		if err != nil {
			t.Fatal(err)
		}
		some = append(some, rows...)
	}
	return all, some
}

// TestFileCache checks that a cached file reads what a freshly opened one
// reads, every read through the call's own reader (a hit reads nothing
// to open and counts its page reads on its own reader only), that another
// size or ETag opens the file again, and that the budget holds.
func TestFileCache(t *testing.T) {
	b1, b2 := selFileBytes(t, 3, true), selFileBytes(t, 4, false)
	fresh := func(b []byte) ([]Row, []Row) {
		f, err := OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		return readBack(t, f)
	}
	all1, some1 := fresh(b1)
	all2, some2 := fresh(b2)
	if reflect.DeepEqual(all1, all2) {
		t.Fatal("the two files must differ")
	}
	c := NewFileCache(64 << 20)
	id1 := FileID{Size: int64(len(b1)), ETag: "v1"}

	first := newCountingAt(b1)
	f, err := c.Open("k", id1, first)
	if err != nil {
		t.Fatal(err)
	}
	opened := first.reads.Load()
	if opened == 0 {
		t.Fatal("a miss read nothing")
	}
	all, some := readBack(t, f)
	if !reflect.DeepEqual(all, all1) || !reflect.DeepEqual(some, some1) {
		t.Fatal("a file opened through the cache reads other rows")
	}
	firstReads := first.reads.Load()

	second := newCountingAt(b1)
	f, err = c.Open("k", id1, second)
	if err != nil {
		t.Fatal(err)
	}
	if n := second.reads.Load(); n != 0 {
		t.Fatalf("a hit read %d times to open", n)
	}
	all, some = readBack(t, f)
	if !reflect.DeepEqual(all, all1) || !reflect.DeepEqual(some, some1) {
		t.Fatal("a cached file reads other rows")
	}
	if first.reads.Load() != firstReads {
		t.Fatal("a cached file read through the reader of the call that opened it")
	}
	if second.reads.Load() != firstReads-opened {
		t.Fatalf("the hit read %d times, the miss %d after opening: page reads differ", second.reads.Load(), firstReads-opened)
	}
	if h, m, n := c.Stats(); h != 1 || m != 1 || n != 1 {
		t.Fatalf("hits %d misses %d files %d", h, m, n)
	}

	// The cached File itself has no reader left: a read site that used
	// the opening reader instead of the call's would fail here.
	c.mu.Lock()
	cached := c.byKey["k"].Value.(*cacheEntry).f
	c.mu.Unlock()
	if _, err := cached.ReadRowsAt(context.Background(), selSchema, ReadOptions{}, 0, []int64{1}); !errors.Is(err, errDetached) {
		t.Fatalf("read through the opening reader: %v", err)
	}

	// Another version under the same name: by ETag, then by size alone.
	for _, id := range []FileID{{Size: int64(len(b2)), ETag: "v2"}, {Size: int64(len(b2))}} {
		c.Open("k", id1, newCountingAt(b1)) // v1 cached again
		f, err = c.Open("k", id, newCountingAt(b2))
		if err != nil {
			t.Fatal(err)
		}
		all, some = readBack(t, f)
		if !reflect.DeepEqual(all, all2) || !reflect.DeepEqual(some, some2) {
			t.Fatalf("%+v: the file's new version read with the old one's footer", id)
		}
	}
	if len(b1) == len(b2) {
		t.Fatal("the size case needs files of different sizes")
	}

	// Concurrent hits, each with its own reader and counts.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			r := newCountingAt(b1)
			f, err := c.Open("k", id1, r)
			if err != nil {
				t.Error(err)
				return
			}
			all, _ := readBack(t, f)
			if !reflect.DeepEqual(all, all1) || r.reads.Load() == 0 {
				t.Error("concurrent hit read other rows or nothing")
			}
		})
	}
	wg.Wait()

	// Budget: a file costing more is not kept; a second file evicts the
	// least recently used one when only one fits.
	cost := fileCost(f)
	small := NewFileCache(cost - 1)
	small.Open("a", FileID{Size: int64(len(b2))}, newCountingAt(b2))
	if _, _, n := small.Stats(); n != 0 {
		t.Fatalf("a file over the budget kept (%d files)", n)
	}
	one := NewFileCache(cost + cost/2)
	one.Open("a", FileID{Size: int64(len(b2))}, newCountingAt(b2))
	one.Open("b", FileID{Size: int64(len(b2))}, newCountingAt(b2))
	if _, _, n := one.Stats(); n != 1 {
		t.Fatalf("%d files kept, budget for one", n)
	}
	if _, ok := one.byKey["b"]; !ok {
		t.Fatal("the newer file was evicted")
	}
}
