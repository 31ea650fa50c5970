package prepared

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestSortRowsSigned: rows sorted by signed integer columns (an optional
// int64 key with nulls, an int32 and a timestamp, negatives and ties)
// come out in the order of the sort by parquet.Type (nulls first, ties by
// input position); unsigned columns are not taken for signed ones.
func TestSortRowsSigned(t *testing.T) {
	type row struct {
		Key *int64 `parquet:"key,optional"`
		Day int32  `parquet:"day"`
		TS  int64  `parquet:"ts,timestamp(microsecond)"`
		ID  int64  `parquet:"id"`
		U32 uint32 `parquet:"u32"`
		U64 uint64 `parquet:"u64"`
	}
	schema := parquet.SchemaOf(row{})
	rng := rand.New(rand.NewPCG(1, 2))
	var rows []parquet.Row
	for i := range 20_000 {
		r := row{Day: int32(rng.IntN(7) - 3), TS: rng.Int64N(50) - 25, ID: int64(i), U32: rng.Uint32(), U64: rng.Uint64()}
		if k := rng.Int64N(300) - 150; k != 0 {
			r.Key = &k
		}
		rows = append(rows, schema.Deconstruct(nil, &r))
	}
	c, err := resolveColumns(schema, Options{Key: "key", Sort: []string{"day", "ts"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, col := range c.order {
		if !signedOrder(col.typ) {
			t.Fatalf("column %s not taken as signed", col.name)
		}
	}
	ids := func(rs []parquet.Row) []int64 {
		var out []int64
		for _, r := range rs {
			out = append(out, valueOf(r, 3).Int64())
		}
		return out
	}
	a, b := slices.Clone(rows), slices.Clone(rows)
	sortRowsSigned(c, a)
	sortRowsValues(c, b)
	if !slices.Equal(ids(a), ids(b)) {
		t.Fatal("the signed sort's order differs from the sort by parquet.Type")
	}
	if valueOf(a[0], 0).IsNull() != true || valueOf(a[len(a)-1], 0).Int64() <= 0 {
		t.Fatal("nulls not first, or negatives not before positives")
	}
	for _, name := range []string{"u32", "u64"} {
		c, err := resolveColumns(schema, Options{Key: name})
		if err != nil {
			t.Fatal(err)
		}
		if signedOrder(c.order[0].typ) {
			t.Errorf("unsigned column %s taken as signed", name)
		}
	}
}
