package rowindex

import (
	"context"
	"io"
	"sync/atomic"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// batchingStore is a store that reads ranges in a batch, counting how each
// read came.
type batchingStore struct {
	store.Store
	ranges, batches atomic.Int64
}

func (s *batchingStore) NewRangeReader(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	s.ranges.Add(1)
	return s.Store.NewRangeReader(ctx, key, off, n)
}

func (s *batchingStore) ReadRanges(ctx context.Context, key string, offs []int64, bufs [][]byte) ([]int, error) {
	s.batches.Add(1)
	return store.ReadRanges(ctx, s.Store, key, offs, bufs)
}

func (s *batchingStore) BatchesRanges() bool { return true }

// TestFetchOneRangeBatched checks that a lookup's one range of a file in a
// store that batches ranges is read as a batch (the file store then trusts
// its last stat for a while: a co-grouped light key reads one range per
// file, and a stat each was 13 % of its CPU), and that the build's reads
// (batch false) stay single reads.
func TestFetchOneRangeBatched(t *testing.T) {
	ctx := context.Background()
	mem, err := store.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := store.WriteAll(ctx, mem, "a", []byte("0123456789"), nil); err != nil {
		t.Fatal(err)
	}
	for _, batch := range []bool{true, false} {
		st := &batchingStore{Store: mem}
		var m meter
		fs := []*fetch{{obj: object{st: st, key: "a", uri: "mem://a"}, r: brange{2, 6}}}
		if err := fetchAll(ctx, &m, fs, batch); err != nil {
			t.Fatal(err)
		}
		if string(fs[0].data) != "2345" || m.requests.Load() != 1 || m.bytes.Load() != 4 {
			t.Errorf("batch %v: read %q, %d requests, %d bytes", batch, fs[0].data, m.requests.Load(), m.bytes.Load())
		}
		if b, r := st.batches.Load(), st.ranges.Load(); batch && (b != 1 || r != 0) || !batch && (b != 0 || r != 1) {
			t.Errorf("batch %v: %d batched reads, %d range readers", batch, b, r)
		}
	}
}
