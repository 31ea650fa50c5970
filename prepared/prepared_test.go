package prepared

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/store"
)

// event is the test record: an optional int64 key with nulls, a timestamp
// to sort by, optional and required primitive columns of every physical
// kind a lake uses, and a repeated column (a list) to carry along.
type event struct {
	User  *int64    `parquet:"user,optional"`
	TS    time.Time `parquet:"ts,timestamp(microsecond)"`
	Name  *string   `parquet:"name,optional"`
	Score float64   `parquet:"score"`
	N     int32     `parquet:"n"`
	Blob  []byte    `parquet:"blob"`
	Tags  []string  `parquet:"tags,list"`
}

// String renders an event for comparisons (pointers by value, empty and
// nil byte arrays alike).
func (e event) String() string {
	u, n := "null", "null"
	if e.User != nil {
		u = fmt.Sprint(*e.User)
	}
	if e.Name != nil {
		n = *e.Name
	}
	return fmt.Sprintf("%s|%d|%s|%v|%d|%x|%v", u, e.TS.UnixMicro(), n, e.Score, e.N, e.Blob, e.Tags)
}

// testUsers is the number of distinct users; user 0 is heavy (≈10% of the
// rows, so its blob column alone exceeds a 4 KiB page) and ≈2% of the rows
// have a null user.
const testUsers = 400

// genEvents returns n events in random (arrival) order.
func genEvents(seed uint64, n int) []event {
	rng := rand.New(rand.NewPCG(seed, 7))
	base := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	out := make([]event, n)
	for i := range out {
		e := event{
			TS:    base.Add(time.Duration(rng.IntN(86_400_000)) * time.Millisecond),
			Score: float64(rng.IntN(4000)) / 4, // exact in binary: DuckDB and Go print the same
			N:     int32(rng.IntN(1000) - 500),
			Blob:  bytes.Repeat([]byte{byte(i)}, rng.IntN(64)),
		}
		switch p := rng.IntN(100); {
		case p < 2: // null user
		case p < 12:
			u := int64(0)
			e.User = &u
		default:
			u := int64(1 + rng.IntN(testUsers-1)*7919%100_003)
			e.User = &u
		}
		if rng.IntN(5) > 0 {
			s := fmt.Sprintf("name-%d", rng.IntN(50))
			e.Name = &s
		}
		for range rng.IntN(3) {
			e.Tags = append(e.Tags, fmt.Sprintf("t%d", rng.IntN(9)))
		}
		out[i] = e
	}
	return out
}

// sortedEvents is what a prepared file must hold: events stably sorted by
// (user nulls first, ts).
func sortedEvents(in []event) []event {
	out := slices.Clone(in)
	slices.SortStableFunc(out, func(a, b event) int {
		switch {
		case a.User == nil && b.User != nil:
			return -1
		case a.User != nil && b.User == nil:
			return 1
		case a.User != nil && *a.User != *b.User:
			return cmp.Compare(*a.User, *b.User)
		}
		return a.TS.Compare(b.TS)
	})
	return out
}

func eventRows(t testing.TB, evs []event) (*parquet.Schema, parquet.RowReader) {
	t.Helper()
	buf := parquet.NewGenericBuffer[event]()
	if _, err := buf.Write(evs); err != nil {
		t.Fatal(err)
	}
	return buf.Schema(), buf.Rows()
}

func openFile(t testing.TB, st store.Store, key string) (*parquet.File, []byte) {
	t.Helper()
	b, err := store.ReadAll(context.Background(), st, key)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f, b
}

func fileStore(t testing.TB) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestRoundTrip writes events with each page policy and reads them back with
// parquet-go: the same rows, in (key, ts) order, with the marker, sorting
// columns, page index and bloom filter every prepared file carries.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	evs := genEvents(1, 20_000)
	want := sortedEvents(evs)
	for _, pageBytes := range []int{PageBytesPerKey, 512, 4096} {
		t.Run(fmt.Sprint("page=", pageBytes), func(t *testing.T) {
			st := fileStore(t)
			schema, rows := eventRows(t, evs)
			opts := Options{Key: "user", Sort: []string{"ts"}, PageBytes: pageBytes, RowGroupRows: 8000}
			fs, err := Write(ctx, st, "x/prepared.parquet", schema, rows, opts)
			if err != nil {
				t.Fatal(err)
			}
			f, b := openFile(t, st, "x/prepared.parquet")
			got, err := parquet.Read[event](bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("read %d rows, wrote %d", len(got), len(want))
			}
			for i := range want {
				if got[i].String() != want[i].String() {
					t.Fatalf("row %d: got %v, want %v", i, got[i], want[i])
				}
			}
			if fs.Rows != int64(len(evs)) || fs.Bytes != int64(len(b)) || fs.Keys != testUsers+1 {
				t.Errorf("stats rows %d bytes %d keys %d; file has %d rows, %d bytes, %d keys", fs.Rows, fs.Bytes, fs.Keys, len(evs), len(b), testUsers+1)
			}
			m, ok, err := MarkerOf(f)
			wantPages := "key"
			if pageBytes > 0 {
				wantPages = "packed"
			}
			if err != nil || !ok || m.Key != "user" || !slices.Equal(m.Sort, []string{"ts"}) || m.Pages != wantPages ||
				m.PageBytes != max(pageBytes, 0) || m.FormatVersion != FormatVersion || m.Bucket != -1 {
				t.Errorf("marker %+v %v %v", m, ok, err)
			}
			if len(f.RowGroups()) < 2 || len(f.RowGroups()) != fs.RowGroups {
				t.Errorf("%d row groups (stats %d), want several of ≤8000 rows cut at keys", len(f.RowGroups()), fs.RowGroups)
			}
			var indexBytes int64
			for _, rg := range f.Metadata().RowGroups {
				sc := rg.SortingColumns
				if len(sc) != 2 || sc[0].ColumnIdx != 0 || sc[1].ColumnIdx != 1 || sc[0].Descending || !sc[0].NullsFirst {
					t.Errorf("sorting columns %+v", sc)
				}
				for i, cc := range rg.Columns {
					if cc.MetaData.Codec.String() != "ZSTD" {
						t.Errorf("column %d codec %v", i, cc.MetaData.Codec)
					}
					if cc.OffsetIndexLength == 0 || cc.ColumnIndexLength == 0 {
						t.Errorf("column %d has no page index", i)
					}
					if (cc.MetaData.BloomFilterOffset > 0) != (i == 0) {
						t.Errorf("column %d bloom filter offset %d: want one on the key only", i, cc.MetaData.BloomFilterOffset)
					}
					indexBytes += int64(cc.OffsetIndexLength) + int64(cc.ColumnIndexLength)
				}
			}
			if indexBytes != fs.PageIndexBytes {
				t.Errorf("page index %d bytes, stats %d", indexBytes, fs.PageIndexBytes)
			}
			// The key's bloom filter holds every user of its row group.
			start := 0
			for _, rg := range f.RowGroups() {
				bf := rg.ColumnChunks()[0].BloomFilter()
				if bf == nil {
					t.Fatal("no bloom filter")
				}
				end := start + int(rg.NumRows())
				for _, e := range got[start:end] {
					if e.User == nil {
						continue
					}
					if ok, err := bf.Check(parquet.ValueOf(*e.User)); !ok || err != nil {
						t.Fatalf("bloom filter misses user %d: %v %v", *e.User, ok, err)
					}
				}
				start = end
			}
		})
	}
}
