package pqrow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ariadne-go/ariadne/schema"
	"github.com/parquet-go/parquet-go"
)

// TestReadTypedAtMatchesRows reads chosen rows of files with nulls,
// dictionary and plain pages, data pages v1 and v2, several row groups and
// pages, unsigned and narrow integers, dates, timestamps of three units
// and a missing column through ReadTypedAt, boxes them, and compares each
// value (and its Go type) with ReadRowsAt's.
func TestReadTypedAtMatchesRows(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 3))
	rows := typedRows(rng, 2000)
	// "b" as a short fits; as a byte it does not everywhere (below).
	fields := slices.Concat(typedSchema.Fields[:9], typedSchema.Fields[10:],
		[]schema.Field{{Name: "b", Type: schema.Short, Nullable: true}, {Name: "i", Type: schema.Short, Nullable: true}})
	st := &schema.Struct{Fields: fields}
	for _, dict := range []bool{false, true} {
		for _, v2 := range []bool{false, true} {
			opts := []parquet.WriterOption{parquet.DefaultEncoding(&parquet.Plain)}
			if dict {
				opts = []parquet.WriterOption{parquet.DefaultEncoding(&parquet.RLEDictionary)}
			}
			if v2 {
				opts = append(opts, parquet.DataPageVersion(2))
			} else {
				opts = append(opts, parquet.DataPageVersion(1))
			}
			f := typedFile(t, rows, opts...)
			cols, ok := f.PlanTyped(fields, ReadOptions{})
			if !ok {
				t.Fatalf("dict=%v v2=%v: not typed", dict, v2)
			}
			for rg := range f.NumRowGroups() {
				n := f.pf.RowGroups()[rg].NumRows()
				for trial := range 12 {
					want := pickRows(rng, n, trial)
					vecs, ok, err := f.ReadTypedAt(ctx, cols, rg, want)
					if err != nil || !ok {
						t.Fatalf("dict=%v v2=%v rg %d rows %v: ok %v, %v", dict, v2, rg, want, ok, err)
					}
					exp, err := f.ReadRowsAt(ctx, st, ReadOptions{}, rg, want)
					if err != nil {
						t.Fatal(err)
					}
					slab := make([]any, len(want)*len(fields))
					for i := range vecs {
						if vecs[i].Len() != len(want) {
							t.Fatalf("column %s: %d values for %d rows", fields[i].Name, vecs[i].Len(), len(want))
						}
						vecs[i].Box(slab, len(fields), i)
					}
					for k, row := range exp {
						for i, w := range row {
							got := slab[k*len(fields)+i]
							if !reflect.DeepEqual(got, w) || got != w {
								t.Fatalf("dict=%v v2=%v rg %d row %d column %s: %#v (%T), want %#v (%T)",
									dict, v2, rg, want[k], fields[i].Name, got, got, w, w)
							}
							if vecs[i].IsNull(k) != (w == nil) {
								t.Fatalf("column %s row %d: IsNull %v, value %v", fields[i].Name, want[k], vecs[i].IsNull(k), w)
							}
						}
					}
				}
			}
		}
	}
}

// typedRows returns n random typedRows (see TestScanTypedMatchesRows).
func typedRows(rng *rand.Rand, n int) []typedRow {
	rows := make([]typedRow, n)
	base := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		r := &rows[i]
		if rng.IntN(5) > 0 {
			l := rng.Int64N(100) - 50
			r.L = &l
		}
		r.I = rng.Int32N(1000) - 500
		r.U = uint32(rng.Uint32())
		if rng.IntN(4) > 0 {
			s := fmt.Sprint("s", rng.IntN(40))
			r.S = &s
		}
		r.P = fmt.Sprintf("p%05d", rng.IntN(100000))
		r.D = int32(rng.IntN(20000) - 10000)
		r.TMs = base.Add(time.Duration(rng.Int64N(1e15)) - 5e14).Truncate(time.Millisecond)
		r.TNs = base.Add(time.Duration(rng.Int64N(1e15)) - 5e14)
		r.TUs = base.Add(time.Duration(rng.Int64N(1e12))).Truncate(time.Microsecond)
		r.B = rng.Int32N(400) - 200
	}
	return rows
}

// pickRows returns ascending rows of [0, n): none, one, the first and the
// last, a run, every row, or a random sparse set.
func pickRows(rng *rand.Rand, n int64, trial int) []int64 {
	var out []int64
	switch trial {
	case 0:
		return nil
	case 1:
		return []int64{rng.Int64N(n)}
	case 2:
		return []int64{0, n - 1}
	case 3:
		lo := rng.Int64N(n)
		for r := lo; r < min(n, lo+150); r++ {
			out = append(out, r)
		}
	case 4:
		for r := range n {
			out = append(out, r)
		}
	default:
		for r := range n {
			if rng.IntN(trial*3) == 0 {
				out = append(out, r)
			}
		}
	}
	return out
}

// TestReadTypedAtConversionErrors checks that a value outside its
// column's type fails the read where its row is wanted, and only there,
// as ReadRowsAt does; and that a file without offset indexes is left to
// the row reader.
func TestReadTypedAtConversionErrors(t *testing.T) {
	ctx := context.Background()
	rows := typedRows(rand.New(rand.NewPCG(5, 5)), 600)
	f := typedFile(t, rows)
	fields := []schema.Field{{Name: "b", Type: schema.Byte, Nullable: true}}
	cols, ok := f.PlanTyped(fields, ReadOptions{})
	if !ok {
		t.Fatal("not typed")
	}
	var fits, bad []int64
	for i, r := range rows { // one row group (typedFile: 700 rows each)
		if r.B >= -128 && r.B <= 127 {
			fits = append(fits, int64(i))
		} else {
			bad = append(bad, int64(i))
		}
	}
	if len(bad) == 0 || len(fits) == 0 {
		t.Fatal("test data: want bytes in and out of range")
	}
	vecs, ok, err := f.ReadTypedAt(ctx, cols, 0, fits)
	if err != nil || !ok {
		t.Fatalf("rows that fit: ok %v, %v", ok, err)
	}
	exp, err := f.ReadRowsAt(ctx, &schema.Struct{Fields: fields}, ReadOptions{}, 0, fits)
	if err != nil {
		t.Fatal(err)
	}
	slab := make([]any, len(fits))
	vecs[0].Box(slab, 1, 0)
	for k := range fits {
		if slab[k] != exp[k][0] {
			t.Fatalf("row %d: %v, want %v", fits[k], slab[k], exp[k][0])
		}
	}
	want := []int64{fits[0], bad[0]}
	slices.Sort(want)
	_, _, err = f.ReadTypedAt(ctx, cols, 0, want)
	_, rerr := f.ReadRowsAt(ctx, &schema.Struct{Fields: fields}, ReadOptions{}, 0, want)
	if !errors.Is(err, ErrSchemaMismatch) || !errors.Is(rerr, ErrSchemaMismatch) {
		t.Fatalf("a byte out of range: typed %v, rows %v; want ErrSchemaMismatch from both", err, rerr)
	}

	// Without offset indexes, nothing is read and the caller reads rows.
	nf := typedFile(t, rows)
	md := nf.pf.Metadata()
	for g := range md.RowGroups {
		for c := range md.RowGroups[g].Columns {
			md.RowGroups[g].Columns[c].OffsetIndexOffset, md.RowGroups[g].Columns[c].OffsetIndexLength = 0, 0
		}
	}
	cols, _ = nf.PlanTyped([]schema.Field{{Name: "l", Type: schema.Long}}, ReadOptions{})
	if _, ok, err := nf.ReadTypedAt(ctx, cols, 0, []int64{1, 2}); ok || err != nil {
		t.Fatalf("no offset index: ok %v, %v; want false and no error", ok, err)
	}
}

// TestBoxEach checks that values boxed into slabs (boxEach, Slab) behave as ordinarily
// boxed ones: equal under ==, reflect.DeepEqual and Equal, the same
// dynamic type for type switches and formatting, nil for nulls, and
// intact after the slabs are dropped and memory is collected and reused.
func TestBoxEach(t *testing.T) {
	const n = 5000
	tm := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.UTC)
	want := make([]any, 0, 6*n)
	slab := make([]any, 6*n)
	func() { // the slabs are referenced only through slab's values
		i8, i16, i32, i64 := make([]int8, n), make([]int16, n), make([]int32, n), make([]int64, n)
		strs, times := make([]string, n), make([]time.Time, n)
		null := make([]bool, n)
		for k := range n {
			i8[k], i16[k], i32[k], i64[k] = int8(k), int16(k*7), int32(k*1001), int64(k)<<40
			strs[k] = fmt.Sprint("v", k)
			times[k] = tm.Add(time.Duration(k) * time.Hour)
			null[k] = k%17 == 0
		}
		boxEach(slab, 6, 0, i8, nil)
		boxEach(slab, 6, 1, i16, nil)
		boxEach(slab, 6, 2, i32, null)
		boxEach(slab, 6, 3, i64, nil)
		boxEach(slab, 6, 4, strs, null)
		boxEach(slab, 6, 5, times, nil)
		// Half of the int64s and strings again through Slabs, one at a time.
		var si64 Slab[int64]
		var sstr Slab[string]
		for k := 0; k < n; k += 2 {
			slab[6*k+3] = si64.Box(i64[k])
			if !null[k] {
				slab[6*k+4] = sstr.Box(strs[k])
			}
		}
		for k := range n {
			var s, x any = strs[k], i32[k]
			if null[k] {
				s, x = nil, nil
			}
			want = append(want, i8[k], i16[k], x, i64[k], s, times[k])
		}
	}()
	for range 3 {
		runtime.GC()
		garbage := make([][]byte, 0, 1000)
		for range 1000 {
			garbage = append(garbage, bytes.Repeat([]byte{0xAB}, 512))
		}
		_ = garbage
	}
	for i, got := range slab {
		w := want[i]
		if got != w || !reflect.DeepEqual(got, w) || !Equal(got, w) || fmt.Sprintf("%T %v", got, got) != fmt.Sprintf("%T %v", w, w) {
			t.Fatalf("value %d: %T %v, want %T %v", i, got, got, w, w)
		}
		switch v := got.(type) {
		case nil, int8, int16, int32, int64, string:
		case time.Time:
			if v.Location() != time.UTC {
				t.Fatalf("value %d: location %v", i, v.Location())
			}
		default:
			t.Fatalf("value %d: type %T", i, got)
		}
	}
	// As map keys (hashing goes through the value).
	m := map[any]int{}
	for _, v := range slab[:60] {
		m[v]++
	}
	for _, v := range want[:60] {
		m[v]--
	}
	for k, c := range m {
		if c != 0 {
			t.Fatalf("map key %v: count %d", k, c)
		}
	}
}

// TestPageStringsCopy checks how a page's wanted strings are copied out:
// dense values as slices of one copy of their span, spread ones each on
// its own (in the arena), nulls left alone, and the values right either
// way.
func TestPageStringsCopy(t *testing.T) {
	vals := []string{"alpha", "", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", strings.Repeat("x", 200)}
	var data []byte
	offsets := []uint32{0}
	for _, v := range vals {
		data = append(data, v...)
		offsets = append(offsets, uint32(len(data)))
	}
	base := func(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }
	for _, c := range []struct {
		name   string
		at     []int32
		shared bool // one copy of the span
	}{
		{"dense with a null", []int32{2, -1, 3, 4, 5}, true},
		{"all", []int32{0, 1, 2, 3, 4, 5, 6, 7, 8}, true},
		{"spread", []int32{0, 7}, false},
		{"one each end of a long value", []int32{0, 8}, true},
		{"nulls and empties", []int32{-1, 1, -1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ps := pageStrings{at: slices.Clone(c.at)}
			dst := make([]string, len(c.at)) // as ReadTypedAt makes it
			scratch := slices.Clone(data)
			ps.copy(dst, scratch, offsets, &stringArena{})
			clear(scratch) // the page's buffer goes back to its pool
			if len(ps.at) != 0 {
				t.Fatalf("at not emptied: %v", ps.at)
			}
			var first string
			for i, j := range c.at {
				want := ""
				if j >= 0 {
					want = vals[j]
				}
				if dst[i] != want {
					t.Fatalf("row %d: %q, want %q", i, dst[i], want)
				}
				if j < 0 || dst[i] == "" {
					continue
				}
				if first == "" {
					first = dst[i]
					continue
				}
				// In one copy, each value sits where the page had it
				// relative to the first.
				same := base(dst[i])-base(first) == uintptr(offsets[j]-offsets[c.at[slices.IndexFunc(c.at, func(x int32) bool { return x >= 0 && vals[x] != "" })]])
				if same != c.shared {
					t.Fatalf("row %d: in one copy %v, want %v", i, same, c.shared)
				}
			}
		})
	}
}
