package prepared

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/aerr"
)

// columns is the key and sort columns of a schema, resolved once.
type columns struct {
	schema *parquet.Schema
	leaves int      // leaf columns of the schema
	order  []column // key first, then the sort columns
}

// column is a top-level primitive column.
type column struct {
	name  string
	index int // leaf column index
	typ   parquet.Type
}

// resolveColumns checks the key and sort columns against the schema and
// gives the schema the output's codec and encodings: Options.Encodings by
// dotted leaf path, else the schema's own encoding except dictionaries.
func resolveColumns(schema *parquet.Schema, o Options) (*columns, error) {
	for name := range o.Encodings {
		if _, ok := schema.Lookup(strings.Split(name, ".")...); !ok {
			return nil, aerr.New(aerr.ErrColumnNotFound, "prepared: encoding for column %s, which is not in the schema", name)
		}
	}
	var bad error
	out := relayout(schema, o.Compression, func(path []string, leaf parquet.Node) encoding.Encoding {
		e, ok := o.Encodings[strings.Join(path, ".")]
		if !ok {
			if e = leaf.Encoding(); isDictionary(e) {
				e = nil
			}
		}
		if e != nil && !isDictionary(e) && !canEncode(e, leaf.Type().Kind()) {
			bad = aerr.Invalid("prepared: column %s cannot be encoded as %s", strings.Join(path, "."), e.Encoding())
		}
		return e
	})
	if bad != nil {
		return nil, bad
	}
	c := &columns{schema: out, leaves: len(schema.Columns())}
	for _, name := range append([]string{o.Key}, o.Sort...) {
		var field parquet.Field
		for _, f := range schema.Fields() {
			if f.Name() == name {
				field = f
			}
		}
		if field == nil {
			return nil, aerr.New(aerr.ErrColumnNotFound, "Column %s was not found in the dataframe (columns: %s)",
				name, strings.Join(topLevel(schema), ", "))
		}
		if !field.Leaf() || field.Repeated() {
			return nil, aerr.Invalid("prepared: column %q must be a top-level, non-repeated primitive column to key or sort by", name)
		}
		leaf, _ := schema.Lookup(name)
		c.order = append(c.order, column{name: name, index: leaf.ColumnIndex, typ: field.Type()})
	}
	return c, nil
}

func topLevel(s *parquet.Schema) []string {
	var out []string
	for _, f := range s.Fields() {
		out = append(out, f.Name())
	}
	return out
}

// valueBytes is the in-memory size of one parquet.Value (its struct; byte
// arrays add their length).
const valueBytes = int64(unsafe.Sizeof(parquet.Value{}))

// rowBytes estimates the memory a retained row takes: its slice header,
// its values and their byte arrays.
func rowBytes(r parquet.Row) int64 {
	n := int64(unsafe.Sizeof(r)) + valueBytes*int64(len(r))
	for _, v := range r {
		switch v.Kind() {
		case parquet.ByteArray, parquet.FixedLenByteArray:
			n += int64(len(v.ByteArray()))
		}
	}
	return n
}

// budget tracks the bytes of rows held for sorting.
type budget struct {
	what      string
	used, max int64
}

func (b *budget) add(r parquet.Row) error {
	b.used += rowBytes(r)
	if b.used > b.max {
		return &BudgetError{What: b.what, Need: b.used, Budget: b.max}
	}
	return nil
}

// readBatch is the number of rows read per ReadRows call.
const readBatch = 1024

// readAll reads every row of rows (until io.EOF), cloned so they outlive
// the reader's buffers, and passes each to keep.
func readAll(ctx context.Context, rows parquet.RowReader, keep func(parquet.Row) error) (int64, error) {
	buf := make([]parquet.Row, readBatch)
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, err := rows.ReadRows(buf)
		for _, r := range buf[:n] {
			if err := keep(r.Clone()); err != nil {
				return total, err
			}
		}
		total += int64(n)
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		if n == 0 {
			return total, fmt.Errorf("prepared: row reader returned no rows and no error")
		}
	}
}

// valueOf returns the value of a top-level non-repeated leaf column in a
// row (exactly one value per row).
func valueOf(r parquet.Row, index int) parquet.Value {
	// In a flat prefix of the schema the value sits at its column index;
	// otherwise search (values are ordered by column).
	if index < len(r) && r[index].Column() == index {
		return r[index]
	}
	i, _ := slices.BinarySearchFunc(r, index, func(v parquet.Value, c int) int { return v.Column() - c })
	return r[i]
}

// compareValues orders two values of one column: nulls first, then by the
// column type's order.
func compareValues(t parquet.Type, a, b parquet.Value) int {
	switch an, bn := a.IsNull(), b.IsNull(); {
	case an && bn:
		return 0
	case an:
		return -1
	case bn:
		return 1
	}
	return t.Compare(a, b)
}

// sortRows sorts rows by (key, sort columns), stably: rows equal on every
// sort column keep their input order, so the output is deterministic.
func sortRows(c *columns, rows []parquet.Row) {
	if slices.IndexFunc(c.order, func(col column) bool { return !signedOrder(col.typ) }) < 0 {
		sortRowsSigned(c, rows)
		return
	}
	sortRowsValues(c, rows)
}

// sortRowsValues is sortRows for columns of any type, compared by their
// parquet.Type.
func sortRowsValues(c *columns, rows []parquet.Row) {
	// Extract the compared values once: comparisons then index a flat slice.
	k := len(c.order)
	vals := make([]parquet.Value, len(rows)*k)
	for i, r := range rows {
		for j, col := range c.order {
			vals[i*k+j] = valueOf(r, col.index)
		}
	}
	sortStable(rows, func(a, b int32) int {
		for j, col := range c.order {
			if d := compareValues(col.typ, vals[int(a)*k+j], vals[int(b)*k+j]); d != 0 {
				return d
			}
		}
		return cmp.Compare(a, b)
	})
}

// sortStable orders rows by compare of their input positions, which breaks
// ties by input position: the order is then total, so the unstable sort of
// a permutation gives the stable result, without slices.SortStableFunc's
// in-place merging (a fifth of prepare's CPU in a profile; ≈15 % less CPU
// overall, on a loaded machine).
func sortStable(rows []parquet.Row, compare func(a, b int32) int) {
	perm := make([]int32, len(rows))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortFunc(perm, compare)
	sorted := make([]parquet.Row, len(rows))
	for i, p := range perm {
		sorted[i] = rows[p]
	}
	copy(rows, sorted)
}

// signedOrder reports whether a column of type t orders its values as
// signed integers: INT32 and INT64 columns (timestamps, dates, decimals
// included) but the unsigned ones.
func signedOrder(t parquet.Type) bool {
	if k := t.Kind(); k != parquet.Int32 && k != parquet.Int64 {
		return false
	}
	if lt := t.LogicalType(); lt != nil {
		if it, ok := lt.Value.(*format.IntType); ok && !it.IsSigned {
			return false
		}
	}
	if ct := t.ConvertedType(); ct != nil && *ct >= deprecated.Uint8 && *ct <= deprecated.Uint64 {
		return false
	}
	return true
}

// sortRowsSigned is sortRows where every compared column has signedOrder:
// the values are taken out once as int64s, nulls as a flag, so a
// comparison is a few integer compares instead of an interface call per
// column (parquet.Type.Compare; the comparisons were a fifth of prepare's
// CPU in a profile of the flat 1 GB folder). The order is sortRows's:
// nulls first, ties broken by input position.
func sortRowsSigned(c *columns, rows []parquet.Row) {
	k := len(c.order)
	type sv struct {
		v    int64
		null bool
	}
	vals := make([]sv, len(rows)*k)
	for i, r := range rows {
		for j, col := range c.order {
			v := valueOf(r, col.index)
			vals[i*k+j] = sv{v.Int64(), v.IsNull()}
			if !v.IsNull() && v.Kind() == parquet.Int32 {
				vals[i*k+j].v = int64(v.Int32())
			}
		}
	}
	sortStable(rows, func(a, b int32) int {
		x, y := vals[int(a)*k:int(a)*k+k], vals[int(b)*k:int(b)*k+k]
		for j := range x {
			switch {
			case x[j].null != y[j].null:
				if x[j].null {
					return -1
				}
				return 1
			case x[j].v != y[j].v:
				return cmp.Compare(x[j].v, y[j].v)
			}
		}
		return cmp.Compare(a, b)
	})
}

// canEncode reports whether a non-dictionary encoding can encode a kind.
func canEncode(e encoding.Encoding, k parquet.Kind) bool {
	switch k {
	case parquet.Boolean:
		return encoding.CanEncodeBoolean(e)
	case parquet.Int32:
		return encoding.CanEncodeInt32(e)
	case parquet.Int64:
		return encoding.CanEncodeInt64(e)
	case parquet.Int96:
		return encoding.CanEncodeInt96(e)
	case parquet.Float:
		return encoding.CanEncodeFloat(e)
	case parquet.Double:
		return encoding.CanEncodeDouble(e)
	case parquet.ByteArray:
		return encoding.CanEncodeByteArray(e)
	case parquet.FixedLenByteArray:
		return encoding.CanEncodeFixedLenByteArray(e)
	}
	return false
}
