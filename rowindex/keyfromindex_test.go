package rowindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/ariadne-go/ariadne/store"
)

// Rows of files whose key column k is an INT32 and an optional INT64.
type (
	i32Row struct {
		K int32  `parquet:"k"`
		V string `parquet:"v"`
	}
	i64Row struct {
		K *int64 `parquet:"k,optional"`
		V string `parquet:"v"`
	}
)

// TestKeyFromIndex: unless VerifyKeys is set, the key column's values of
// the rows a lookup returns come from the index, not the file: for every
// kind whose key is exact (booleans, 32- and 64-bit integers, strings,
// fixed-length bytes; an optional column with nulls beside) the rows
// equal a full scan's value for value, and the lookup reads fewer bytes
// than with VerifyKeys; a float key column is read either way.
func TestKeyFromIndex(t *testing.T) {
	type (
		strRow struct {
			K string `parquet:"k"`
			V string `parquet:"v"`
		}
		fixedRow struct {
			K [6]byte `parquet:"k"`
			V string  `parquet:"v"`
		}
		boolRow struct {
			K bool   `parquet:"k"`
			V string `parquet:"v"`
		}
		f64Row struct {
			K float64 `parquet:"k"`
			V string  `parquet:"v"`
		}
	)
	const n = 6000
	val := func(i int) string { return fmt.Sprintf("value %d %016x", i, uint64(i)*0x9e3779b97f4a7c15) }
	opts := []parquet.WriterOption{parquet.Compression(&zstd.Codec{}), parquet.PageBufferSize(2048)}
	for _, tc := range []struct {
		name  string
		write func(t *testing.T, ctx context.Context, st store.Store)
		keys  []any
		read  bool // the key column is read without VerifyKeys too
	}{
		{"int32", func(t *testing.T, ctx context.Context, st store.Store) {
			rows := make([]i32Row, n)
			for i := range rows {
				rows[i] = i32Row{K: int32(i*7919%997) - 400, V: val(i)}
			}
			writeRows(t, ctx, st, "f.parquet", rows, opts...)
		}, []any{int64(-400), int64(0), int64(596)}, false},
		{"optional int64", func(t *testing.T, ctx context.Context, st store.Store) {
			rows := make([]i64Row, n)
			for i := range rows {
				if i%5 != 0 {
					k := int64(i*7919%997) << 40
					rows[i].K = &k
				}
				rows[i].V = val(i)
			}
			writeRows(t, ctx, st, "f.parquet", rows, opts...)
		}, []any{int64(3) << 40, int64(996) << 40}, false},
		{"string", func(t *testing.T, ctx context.Context, st store.Store) {
			rows := make([]strRow, n)
			for i := range rows {
				rows[i] = strRow{K: fmt.Sprintf("user-%d", i*7919%997), V: val(i)}
			}
			writeRows(t, ctx, st, "f.parquet", rows, opts...)
		}, []any{"user-0", "user-500", ""}, false},
		{"fixed", func(t *testing.T, ctx context.Context, st store.Store) {
			rows := make([]fixedRow, n)
			for i := range rows {
				copy(rows[i].K[:], fmt.Sprintf("%06d", i*7919%997))
				rows[i].V = val(i)
			}
			writeRows(t, ctx, st, "f.parquet", rows, opts...)
		}, []any{"000017", "000996"}, false},
		{"bool", func(t *testing.T, ctx context.Context, st store.Store) {
			rows := make([]boolRow, n)
			for i := range rows {
				rows[i] = boolRow{K: i%97 == 0, V: val(i)}
			}
			writeRows(t, ctx, st, "f.parquet", rows, opts...)
		}, []any{true, false}, false},
		{"float64", func(t *testing.T, ctx context.Context, st store.Store) {
			rows := make([]f64Row, n)
			for i := range rows {
				rows[i] = f64Row{K: float64(i*7919%997) / 4, V: val(i)}
				if i%997 == 3 {
					rows[i].K = -0.0 // -0's key is +0's
				}
			}
			writeRows(t, ctx, st, "f.parquet", rows, opts...)
		}, []any{float64(0), float64(100.25)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			data, err := store.Open(ctx, "file://"+dir)
			if err != nil {
				t.Fatal(err)
			}
			tc.write(t, ctx, data)
			idx, _ := store.Open(ctx, "mem://")
			if _, _, err := Create(ctx, idx, Definition{Name: "k", Key: "k"}, StoreResolver{data}, []string{"f.parquet"}); err != nil {
				t.Fatal(err)
			}
			for _, key := range tc.keys {
				kb, err := EncodeKey(key)
				if err != nil {
					t.Fatal(err)
				}
				want := fullScan(t, dir, []string{"f.parquet"}, "k", kb, kb)
				if len(want) == 0 && key != "" {
					t.Fatalf("key %v holds no row", key)
				}
				var read [2]int64
				for i, verify := range []bool{false, true} {
					ri, err := Open(ctx, idx, "k", Options{Resolver: StoreResolver{data}, PageCacheBytes: -1, VerifyKeys: verify})
					if err != nil {
						t.Fatal(err)
					}
					res := checkedLookup(t, ri, key, want, fmt.Sprintf("key %v, VerifyKeys %v", key, verify))
					read[i] = res.Plan.Data.BytesRead
				}
				if len(want) > 0 && (read[0] < read[1]) == tc.read {
					t.Fatalf("key %v: %d bytes read, %d with VerifyKeys (key column read without: %v)", key, read[0], read[1], tc.read)
				}
			}
		})
	}
}

// TestVerifyKeysInPlace: a data file whose key value is overwritten in
// place, keeping its size and footer (an uncompressed PLAIN column: no
// page size changes), is caught by VerifyKeys (ErrDataFileChanged);
// without it the lookup returns the row the index points at with the key
// (the trade-off documented in docs/rowindex.md).
func TestVerifyKeysInPlace(t *testing.T) {
	type row struct {
		K int64  `parquet:"k,plain"`
		V string `parquet:"v"`
	}
	ctx := context.Background()
	dir := t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]row, 1000)
	for i := range rows {
		rows[i] = row{K: 1_000_000 + int64(i), V: fmt.Sprint(i)}
	}
	writeRows(t, ctx, data, "f.parquet", rows, parquet.Compression(&parquet.Uncompressed))
	idx, _ := store.Open(ctx, "mem://")
	if _, _, err := Create(ctx, idx, Definition{Name: "k", Key: "k"}, StoreResolver{data}, []string{"f.parquet"}); err != nil {
		t.Fatal(err)
	}
	// Key 1,000,500 becomes 1,000,501 in place (neither the column's least
	// nor its greatest value: the footer's statistics stay).
	path := filepath.Join(dir, "f.parquet")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := binary.LittleEndian.AppendUint64(nil, 1_000_500)
	if bytes.Count(b, old) != 1 {
		t.Fatalf("the key's bytes occur %d times", bytes.Count(b, old))
	}
	copy(b[bytes.Index(b, old):], binary.LittleEndian.AppendUint64(nil, 1_000_501))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, verify := range []bool{false, true} {
		ri, err := Open(ctx, idx, "k", Options{Resolver: StoreResolver{data}, VerifyKeys: verify})
		if err != nil {
			t.Fatal(err)
		}
		res, err := ri.Lookup(ctx, Query{Key: int64(1_000_500)})
		switch {
		case verify && !errors.Is(err, ErrDataFileChanged):
			t.Fatalf("VerifyKeys: %v, want ErrDataFileChanged", err)
		case !verify && (err != nil || len(res.Rows) != 1 || res.Rows[0].Values[0].Int64() != 1_000_500):
			t.Fatalf("without VerifyKeys: %v, %+v", err, res)
		}
	}
}

// TestKeyFromIndexRanges: a sorted row index's range lookups, whose
// batches mix many keys, paged by Limit and resumed by Cursor, return the
// rows of a full scan value for value with the key column from the index,
// over files whose key columns differ in kind (INT32 in one file, an
// optional INT64 with nulls in the other).
func TestKeyFromIndexRanges(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	a, b := make([]i32Row, 5000), make([]i64Row, 5000)
	for i := range a {
		a[i] = i32Row{K: int32(i * 7919 % 503), V: fmt.Sprint("a", i)}
		if i%4 != 0 {
			k := int64(i * 104729 % 509)
			b[i].K = &k
		}
		b[i].V = fmt.Sprint("b", i)
	}
	opts := []parquet.WriterOption{parquet.Compression(&zstd.Codec{}), parquet.PageBufferSize(1024)}
	writeRows(t, ctx, data, "a.parquet", a, opts...)
	writeRows(t, ctx, data, "b.parquet", b, opts...)
	uris := []string{"a.parquet", "b.parquet"}
	idx, _ := store.Open(ctx, "mem://")
	if _, _, err := Create(ctx, idx, Definition{Name: "k", Key: "k", Kind: KindSorted}, StoreResolver{data}, uris); err != nil {
		t.Fatal(err)
	}
	ri, err := Open(ctx, idx, "k", Options{Resolver: StoreResolver{data}, PageCacheBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := int64(100), int64(260)
	lb, _ := EncodeKey(lo)
	hb, _ := EncodeKey(hi)
	want := fullScan(t, dir, uris, "k", lb, hb)
	var got []Row
	q := Query{Low: lo, High: hi, Range: true, Limit: 777}
	for page := 0; ; page++ {
		res, err := ri.Lookup(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Rows...)
		if res.Cursor == "" {
			break
		}
		if page > len(want) {
			t.Fatal("the cursor does not end")
		}
		q.Cursor = res.Cursor
	}
	// Rows of one key may come in another file order than the scan's.
	key := func(r Row) string { return fmt.Sprint(r.File, "#", r.Row) }
	byPos := map[string]scanRow{}
	for _, w := range want {
		byPos[fmt.Sprint(w.file, "#", w.row)] = w
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, the full scan has %d", len(got), len(want))
	}
	for _, g := range got {
		w, ok := byPos[key(g)]
		if !ok || !rowsEqual(g.Values, w.vals) {
			t.Fatalf("row %s: %v, the full scan has %v", key(g), g.Values, w.vals)
		}
		delete(byPos, key(g))
	}
}
