package prepared

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/ariadne-go/ariadne/aerr"
)

// TestBlobEncodingRoundTrip: every physical type, required and optional,
// with edge values (NaN and −0.0 bit patterns, INT96, empty and long byte
// arrays, all fields null, more than 8 optional fields so the null bitmap
// takes two bytes) decodes back to exactly the values encoded, leveled at
// the field's column of the source schema; the marker survives JSON; and
// every truncation of a value, or a byte too many, is ErrBadBlob.
func TestBlobEncodingRoundTrip(t *testing.T) {
	g := parquet.Group{"k": parquet.Leaf(parquet.Int64Type)}
	type field struct {
		name string
		node parquet.Node
		vals []parquet.Value
	}
	long := make([]byte, 300) // a 2-byte varint length
	fields := []field{
		{"b", parquet.Leaf(parquet.BooleanType), []parquet.Value{parquet.BooleanValue(true), parquet.BooleanValue(false)}},
		{"i32", parquet.Leaf(parquet.Int32Type), []parquet.Value{parquet.Int32Value(math.MinInt32), parquet.Int32Value(-1)}},
		{"i64", parquet.Leaf(parquet.Int64Type), []parquet.Value{parquet.Int64Value(math.MaxInt64), parquet.Int64Value(0)}},
		{"i96", parquet.Leaf(parquet.Int96Type), []parquet.Value{parquet.Int96Value(deprecated.Int96{1, 2, 0xFFFFFFFF}), parquet.Int96Value(deprecated.Int96{})}},
		{"f32", parquet.Leaf(parquet.FloatType), []parquet.Value{parquet.FloatValue(float32(math.NaN())), parquet.FloatValue(float32(math.Copysign(0, -1)))}},
		{"f64", parquet.Leaf(parquet.DoubleType), []parquet.Value{parquet.DoubleValue(math.Inf(-1)), parquet.DoubleValue(math.Copysign(0, -1))}},
		{"s", parquet.String(), []parquet.Value{parquet.ByteArrayValue([]byte("")), parquet.ByteArrayValue(long)}},
		{"i16", parquet.Int(16), []parquet.Value{parquet.Int32Value(-300), parquet.Int32Value(math.MaxInt16)}},
		{"fx", parquet.Leaf(parquet.FixedLenByteArrayType(5)), []parquet.Value{parquet.FixedLenByteArrayValue([]byte("abcde")), parquet.FixedLenByteArrayValue(make([]byte, 5))}},
	}
	var names []string
	for _, f := range fields {
		g[f.name] = f.node
		g["o_"+f.name] = parquet.Optional(f.node)
		names = append(names, f.name, "o_"+f.name)
	}
	schema := parquet.NewSchema("r", g)
	p := testBlobPlan(t, schema, &BlobOptions{Column: "blob", Fields: names})
	mj, _ := json.Marshal(p.marker)
	var m BlobMarker
	if err := json.Unmarshal(mj, &m); err != nil {
		t.Fatal(err)
	}
	b, err := NewBlob(m)
	if err != nil {
		t.Fatal(err)
	}
	// Rows: values i of every field; the second with every optional null.
	for i := range 3 {
		row := parquet.Row{}
		for _, path := range schema.Columns() {
			l, _ := schema.Lookup(path...)
			name := path[0]
			if name == "k" {
				row = append(row, parquet.Int64Value(int64(i)).Level(0, 0, l.ColumnIndex))
				continue
			}
			opt := strings.HasPrefix(name, "o_")
			if opt {
				name = name[2:]
			}
			var v parquet.Value
			for _, f := range fields {
				if f.name == name {
					v = f.vals[i%2]
				}
			}
			switch {
			case opt && i == 1:
				v = parquet.NullValue().Level(0, 0, l.ColumnIndex)
			case opt:
				v = v.Level(0, 1, l.ColumnIndex)
			default:
				v = v.Level(0, 0, l.ColumnIndex)
			}
			row = append(row, v)
		}
		out, _ := p.convert(row, nil)
		if len(out) != 2 { // the key and the blob: every other column is in it
			t.Fatalf("output row %v", out)
		}
		v := out[1].ByteArray()
		dec, err := b.Decode(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		// The blob's fields are the key then names, in that order; each
		// decodes to its source value, bit for bit, at its source column.
		if len(dec) != len(row) {
			t.Fatalf("row %d: %d values decoded, %d encoded", i, len(dec), len(row))
		}
		byCol := map[int]parquet.Value{}
		for _, x := range row {
			byCol[x.Column()] = x
		}
		for _, d := range dec {
			want := byCol[d.Column()]
			same := parquet.Equal(d, want)
			switch { // NaN is not Equal to itself; −0.0 is Equal to 0.0: bits
			case d.IsNull() || want.IsNull():
			case d.Kind() == parquet.Float && want.Kind() == parquet.Float:
				same = math.Float32bits(d.Float()) == math.Float32bits(want.Float())
			case d.Kind() == parquet.Double && want.Kind() == parquet.Double:
				same = math.Float64bits(d.Double()) == math.Float64bits(want.Double())
			}
			if !same || d.DefinitionLevel() != want.DefinitionLevel() || d.Kind() != want.Kind() {
				t.Fatalf("row %d column %d: decoded %v (def %d), encoded %v (def %d)", i, d.Column(), d, d.DefinitionLevel(), want, want.DefinitionLevel())
			}
		}
		// 9 optional fields: two bytes of null bitmap.
		if i == 0 && v[0]|v[1] != 0 || i == 1 && (v[0] != 0xFF || v[1] != 0x01) {
			t.Errorf("row %d: null bitmap %08b %08b", i, v[0], v[1])
		}
		for n := range len(v) {
			if _, err := b.Decode(nil, v[:n]); !errors.Is(err, ErrBadBlob) || !errors.Is(err, aerr.ErrCorruptDataFile) {
				t.Fatalf("row %d cut to %d of %d bytes: %v", i, n, len(v), err)
			}
		}
		if _, err := b.Decode(nil, append(v[:len(v):len(v)], 0)); !errors.Is(err, ErrBadBlob) {
			t.Fatalf("row %d with a byte too many: %v", i, err)
		}
	}
	// A marker whose fields disagree with its schema is refused.
	bad := m
	bad.Fields = append([]BlobField(nil), m.Fields...)
	bad.Fields[1].Type = "DOUBLE"
	if _, err := NewBlob(bad); !errors.Is(err, ErrBadBlob) {
		t.Errorf("fields unlike the schema: %v", err)
	}
}

// TestBlockEncodingRoundTrip: a co-grouped block (BlobBlockEncoding) of
// every physical type, required and optional, with optional columns all
// null over 2,000 rows (a bitmap far shorter than the row count) and a
// block of the key alone, compressed with a trained dictionary, decodes to
// exactly its rows in leaf order; truncated or extended frames, and a
// block decoded as a row, are ErrBadBlob.
func TestBlockEncodingRoundTrip(t *testing.T) {
	g := parquet.Group{"k": parquet.Leaf(parquet.Int64Type), "s": parquet.String(), "o": parquet.Optional(parquet.Leaf(parquet.Int32Type)),
		"b": parquet.Leaf(parquet.BooleanType), "d": parquet.Leaf(parquet.DoubleType), "fx": parquet.Optional(parquet.Leaf(parquet.FixedLenByteArrayType(3))),
		"i96": parquet.Leaf(parquet.Int96Type), "f": parquet.Leaf(parquet.FloatType)}
	schema := parquet.NewSchema("r", g)
	fields := []string{"s", "o", "b", "d", "fx", "i96", "f"}
	p := testBlobPlan(t, schema, &BlobOptions{Column: "blob", Fields: fields, Codec: BlobCodecZstdDict})
	leaf := func(name string) int { l, _ := schema.Lookup(name); return l.ColumnIndex }
	// Per field (blob order: the key first), n rows of values.
	block := func(n int, nulls bool) [][]parquet.Value {
		c := make([][]parquet.Value, len(p.kinds))
		for i := range n {
			c[0] = append(c[0], parquet.Int64Value(-7).Level(0, 0, leaf("k")))
			c[1] = append(c[1], parquet.ByteArrayValue([]byte(strings.Repeat("x", i%40))).Level(0, 0, leaf("s")))
			if nulls || i%3 == 0 {
				c[2] = append(c[2], parquet.NullValue().Level(0, 0, leaf("o")))
				c[5] = append(c[5], parquet.NullValue().Level(0, 0, leaf("fx")))
			} else {
				c[2] = append(c[2], parquet.Int32Value(int32(i)).Level(0, 1, leaf("o")))
				c[5] = append(c[5], parquet.FixedLenByteArrayValue([]byte{byte(i), 1, 2}).Level(0, 1, leaf("fx")))
			}
			c[3] = append(c[3], parquet.BooleanValue(i%2 == 0).Level(0, 0, leaf("b")))
			c[4] = append(c[4], parquet.DoubleValue(math.Copysign(0, -1)).Level(0, 0, leaf("d")))
			c[6] = append(c[6], parquet.Int96Value(deprecated.Int96{uint32(i), 0, 0xFFFFFFFF}).Level(0, 0, leaf("i96")))
			c[7] = append(c[7], parquet.FloatValue(float32(math.NaN())).Level(0, 0, leaf("f")))
		}
		return c
	}
	blocks := [][][]parquet.Value{block(5, false), block(2000, true), block(1, false)}
	var raws [][]byte
	for _, c := range blocks {
		raws = append(raws, p.encodeBlock(nil, len(c[0]), c))
	}
	dict, err := trainDict(raws, 2)
	if err != nil {
		t.Fatal(err)
	}
	m := p.marker
	m.Dict = dict
	b, err := NewBlob(m)
	if err != nil || !b.Blocks() {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderDict(dict), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	for bi, c := range blocks {
		z := enc.EncodeAll(raws[bi], nil)
		rows, err := b.DecodeBlock(nil, z)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(c[0]) {
			t.Fatalf("block %d: %d rows, %d encoded", bi, len(rows), len(c[0]))
		}
		for r, row := range rows {
			if len(row) != len(c) {
				t.Fatalf("block %d row %d: %v", bi, r, row)
			}
			for i, v := range row {
				if i > 0 && row[i-1].Column() >= v.Column() {
					t.Fatalf("block %d row %d: not in leaf order: %v", bi, r, row)
				}
			}
			for fi := range c {
				want := c[fi][r]
				got := row[b.pos[fi]]
				if got.Column() != want.Column() || got.DefinitionLevel() != want.DefinitionLevel() || !parquet.Equal(got, want) && !(want.Kind() == parquet.Float && math.IsNaN(float64(got.Float()))) {
					t.Fatalf("block %d row %d field %s: %v, want %v", bi, r, fields[max(fi-1, 0)], got, want)
				}
			}
		}
		if _, err := b.DecodeBlock(nil, z[:len(z)-1]); !errors.Is(err, ErrBadBlob) {
			t.Errorf("block %d truncated: %v", bi, err)
		}
		if _, err := b.DecodeBlock(nil, enc.EncodeAll(append(raws[bi][:len(raws[bi]):len(raws[bi])], 0), nil)); !errors.Is(err, ErrBadBlob) {
			t.Errorf("block %d with a byte too many: %v", bi, err)
		}
		if _, err := b.Decode(nil, z); !errors.Is(err, ErrBadBlob) {
			t.Errorf("block %d decoded as a row: %v", bi, err)
		}
	}
	// A block shorter than its row count: the key and one optional column,
	// null in all 2,000 rows (a 250-byte bitmap).
	g2 := parquet.Group{"k": parquet.Leaf(parquet.Int64Type), "o": parquet.Optional(parquet.Leaf(parquet.Int32Type))}
	p2 := testBlobPlan(t, parquet.NewSchema("r", g2), &BlobOptions{Column: "blob", Fields: []string{"o"}, Codec: BlobCodecZstdDict})
	c2 := make([][]parquet.Value, 2)
	for range 2000 {
		c2[0] = append(c2[0], parquet.Int64Value(1).Level(0, 0, 0))
		c2[1] = append(c2[1], parquet.NullValue().Level(0, 0, 1))
	}
	raw2 := p2.encodeBlock(nil, 2000, c2)
	m2 := p2.marker
	m2.Dict = dict
	b2, err := NewBlob(m2)
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := b2.DecodeBlock(nil, enc.EncodeAll(raw2, nil)); err != nil || len(rows) != 2000 || len(raw2) >= 2000 || !rows[1999][1].IsNull() {
		t.Fatalf("all-null block of %d bytes: %d rows, %v", len(raw2), len(rows), err)
	}
}

// TestBlockEncoding2RoundTrip: blocks read back from BlobBlockEncoding to
// BlobBlockEncoding2 with the transforms chosen from their values (integer
// base and scale, delta for a column sorted within blocks, byte-array
// prefix), at the extremes of INT32 and INT64 and with nulls and a value
// equal to the prefix, decode to the same rows; the transforms are the
// expected ones; a stripped frame restores, and a damaged header is
// ErrBadBlob. As BlobBlockEncoding3 values, compressed and raw, they decode
// to the same rows, which stay valid while later blocks are decoded.
func TestBlockEncoding2RoundTrip(t *testing.T) {
	g := parquet.Group{"k": parquet.Leaf(parquet.Int64Type), "ts": parquet.Leaf(parquet.Int64Type), "s": parquet.Optional(parquet.String()),
		"i": parquet.Optional(parquet.Leaf(parquet.Int32Type)), "x": parquet.Leaf(parquet.Int64Type), "none": parquet.Optional(parquet.Leaf(parquet.Int64Type)),
		"d": parquet.Leaf(parquet.DoubleType)}
	schema := parquet.NewSchema("r", g)
	p := testBlobPlan(t, schema, &BlobOptions{Column: "blob", Fields: []string{"ts", "s", "i", "x", "none", "d"}, Codec: BlobCodecZstdDict})
	leaf := func(name string) int { l, _ := schema.Lookup(name); return l.ColumnIndex }
	extremes := []int64{math.MinInt64, math.MaxInt64, -1, 0, 1}
	var raws [][]byte
	for bi := range 40 {
		n := 1 + bi%7
		c := make([][]parquet.Value, len(p.kinds))
		for i := range n {
			c[0] = append(c[0], parquet.Int64Value(int64(bi*3-50)).Level(0, 0, leaf("k")))
			c[1] = append(c[1], parquet.Int64Value(1_717_200_000_000_000+int64(bi*5_000_000+i*7_000)).Level(0, 0, leaf("ts")))
			switch {
			case i == 2:
				c[2] = append(c[2], parquet.NullValue().Level(0, 0, leaf("s")))
				c[3] = append(c[3], parquet.NullValue().Level(0, 0, leaf("i")))
			case bi == 3 && i == 0:
				c[2] = append(c[2], parquet.ByteArrayValue([]byte("spotify:track:")).Level(0, 1, leaf("s")))
				c[3] = append(c[3], parquet.Int32Value(math.MinInt32).Level(0, 1, leaf("i")))
			default:
				c[2] = append(c[2], parquet.ByteArrayValue(fmt.Appendf(nil, "spotify:track:%d", bi*i)).Level(0, 1, leaf("s")))
				c[3] = append(c[3], parquet.Int32Value(int32(math.MaxInt32-bi*i)).Level(0, 1, leaf("i")))
			}
			c[4] = append(c[4], parquet.Int64Value(extremes[(bi+i)%len(extremes)]).Level(0, 0, leaf("x")))
			c[5] = append(c[5], parquet.NullValue().Level(0, 0, leaf("none")))
			c[6] = append(c[6], parquet.DoubleValue(float64(i)/3).Level(0, 0, leaf("d")))
		}
		raws = append(raws, p.encodeBlock(nil, n, c))
	}
	in, err := parseBlob(p.marker)
	if err != nil {
		t.Fatal(err)
	}
	st := newBlockStats(in)
	var rows []parquet.Row
	for _, r := range raws {
		if rows, err = in.decodeRaw(rows[:0], r); err != nil {
			t.Fatal(err)
		}
		st.add(rows)
	}
	m := p.marker
	m.Encoding, m.Fields = BlobBlockEncoding2, st.fields(raws)
	byName := map[string]BlobField{}
	for _, f := range m.Fields {
		byName[f.Name] = f
	}
	if f := byName["ts"]; f.Base != 1_717_200_000_000_000 || f.Scale != 1000 || !f.Delta {
		t.Errorf("ts transforms %+v, want base 1717200000000000, scale 1000, delta", f)
	}
	if f := byName["s"]; string(f.Prefix) != "spotify:track:" || f.Scale != 0 {
		t.Errorf("s transforms %+v, want the prefix spotify:track:", f)
	}
	if f := byName["x"]; f.Base != math.MinInt64 || f.Scale != 1 {
		t.Errorf("x transforms %+v, want base MinInt64, scale 1", f)
	}
	if f := byName["k"]; f.Base != -50 || f.Delta {
		t.Errorf("key transforms %+v, want base -50, no delta", f)
	}
	out, err := parseBlob(m)
	if err != nil {
		t.Fatal(err)
	}
	dict, err := trainDict(raws, zstd.SpeedBetterCompression)
	if err != nil {
		t.Fatal(err)
	}
	m.Dict = dict
	b, err := NewBlob(m)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderDict(dict), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	// The same blocks as BlobBlockEncoding3 values: compressed (tag 1) and
	// raw (tag 2, read without ZSTD), with no prefix, so that the byte
	// arrays are the decoded block's own bytes.
	m3 := m
	m3.Encoding, m3.Fields = BlobBlockEncoding3, slices.Clone(m.Fields)
	for i := range m3.Fields {
		m3.Fields[i].Prefix = nil
	}
	b3, err := NewBlob(m3)
	if err != nil {
		t.Fatal(err)
	}
	same := func(bi int, got, want []parquet.Row) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("block %d: %d rows, want %d", bi, len(got), len(want))
		}
		for i := range want {
			if !slices.EqualFunc(got[i], want[i], func(a, b parquet.Value) bool {
				return parquet.Equal(a, b) && a.Column() == b.Column() && a.DefinitionLevel() == b.DefinitionLevel()
			}) {
				t.Fatalf("block %d row %d: %v, want %v", bi, i, got[i], want[i])
			}
		}
	}
	// The first block's rows, decoded each way, are checked again after
	// every other block was decoded: DecodeBlock reuses its frame and
	// output buffers, the caller its value's, and the rows must not point
	// into them.
	var first [][]parquet.Row
	var want0 []parquet.Row
	for bi, r := range raws {
		want, err := in.decodeRaw(nil, r)
		if err != nil {
			t.Fatal(err)
		}
		v2 := out.encodeBlock2(nil, want)
		z, ok := stripFrame(enc.EncodeAll(v2, nil))
		if !ok {
			t.Fatalf("block %d: frame not stripped", bi)
		}
		got, err := b.DecodeBlock(nil, z)
		if err != nil {
			t.Fatalf("block %d: %v", bi, err)
		}
		same(bi, got, want)
		v3 := b3.encodeBlock2(nil, want)
		c3, ok := compactFrame(enc.EncodeAll(v3, nil))
		if !ok {
			t.Fatalf("block %d: frame not compacted", bi)
		}
		for _, v := range [][]byte{c3, append([]byte{frameTagRaw}, v3...)} {
			got3, err := b3.DecodeBlock(nil, v)
			if err != nil {
				t.Fatalf("block %d, tag %d: %v", bi, v[0], err)
			}
			same(bi, got3, want)
			if bi == 0 {
				first = append(first, got3)
			}
			clear(v) // the caller's read buffer, reused

		}
		if bi == 0 {
			first, want0 = append(first, got), want
		}
		bad := bytes.Clone(z)
		bad[0] |= 1 // a dictionary ID flag where none may be
		if _, err := b.DecodeBlock(nil, bad); !errors.Is(err, ErrBadBlob) {
			t.Errorf("block %d with a damaged header: %v", bi, err)
		}
	}
	for _, got := range first {
		same(0, got, want0)
	}
	// A scale that does not suit the field's type is ErrBadBlob.
	m.Fields = slices.Clone(m.Fields)
	m.Fields[slices.IndexFunc(m.Fields, func(f BlobField) bool { return f.Name == "d" })].Scale = 3
	if _, err := NewBlob(m); !errors.Is(err, ErrBadBlob) {
		t.Errorf("a DOUBLE with a scale: %v", err)
	}
}

// testBlobPlan plans blob b over schema, keyed by its column k.
func testBlobPlan(t testing.TB, schema *parquet.Schema, b *BlobOptions) *blobPlan {
	t.Helper()
	o, err := Options{Key: "k"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cols, err := resolveColumns(schema, o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := planBlob(cols, b, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// int64Block2 returns the ariadne-block-2 blob of a key k and a required
// INT64 field x, both stored as (v − base) / scale.
func int64Block2(t *testing.T, base, scale int64) *Blob {
	t.Helper()
	schema := parquet.NewSchema("r", parquet.Group{"k": parquet.Leaf(parquet.Int64Type), "x": parquet.Leaf(parquet.Int64Type)})
	p := testBlobPlan(t, schema, &BlobOptions{Column: "blob", Fields: []string{"x"}, Codec: BlobCodecZstdDict})
	m := p.marker
	m.Encoding = BlobBlockEncoding2
	m.Fields = slices.Clone(m.Fields)
	for i := range m.Fields {
		m.Fields[i].Base, m.Fields[i].Scale = base, scale
	}
	b, err := parseBlob(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBlockEncoding2DamagedInteger: an ariadne-block-2 integer whose
// stored u is past what the writer can store (Base + u·Scale > MaxInt64)
// is ErrBadBlob, not the value the wrapped product would give: u·10 below
// wraps to 4, which would decode as 14 (not even a Base + k·Scale).
func TestBlockEncoding2DamagedInteger(t *testing.T) {
	b := int64Block2(t, 10, 10)
	block := func(u uint64) []byte {
		raw := binary.AppendUvarint(nil, 1) // one row
		raw = binary.AppendUvarint(raw, 0)  // the key
		return binary.AppendUvarint(raw, u)
	}
	if rows, err := b.decodeRaw(nil, block(1844674407370955162)); !errors.Is(err, ErrBadBlob) {
		t.Fatalf("damaged u decoded as %v, err %v; want ErrBadBlob", rows, err)
	}
	// The largest u the field can hold still decodes.
	most := uint64(math.MaxInt64-10) / 10
	rows, err := b.decodeRaw(nil, block(most))
	if err != nil || len(rows) != 1 || rows[0][1].Int64() != 10+int64(most)*10 {
		t.Fatalf("u %d: %v, %v", most, rows, err)
	}
}

// TestBlockRowCountBound: a block whose row count is more than its bytes
// can hold (a byte a row for a required field, a bit for an optional one)
// is ErrBadBlob before its rows × fields values are allocated; the
// largest count its bytes hold still decodes.
func TestBlockRowCountBound(t *testing.T) {
	b := int64Block2(t, 0, 1)
	block := func(count, values int) []byte {
		raw := binary.AppendUvarint(nil, uint64(count))
		raw = binary.AppendUvarint(raw, 0) // the key
		for range values {
			raw = binary.AppendUvarint(raw, 1)
		}
		return raw
	}
	// 64 rows claimed in a block of 3 + 8 bytes: a required INT64 needs a
	// byte a row, so at most 11.
	if rows, err := b.decodeRaw(nil, block(64, 8)); !errors.Is(err, ErrBadBlob) || !strings.Contains(err.Error(), "row count") {
		t.Fatalf("64 rows in 11 bytes: %d rows, err %v; want ErrBadBlob for the row count", len(rows), err)
	}
	if rows, err := b.decodeRaw(nil, block(8, 8)); err != nil || len(rows) != 8 {
		t.Fatalf("8 rows: %d rows, %v", len(rows), err)
	}
}

// TestBlockEncoding3Frames: compactFrame keeps a one-block frame as its
// tag and the block's content (compressed or raw) and any other frame
// stripped; expandFrame gives back a frame that decodes, with the file's
// dictionary, to the same bytes; a bad tag, an empty compressed block and
// a block past 128 KiB are refused, and DecodeBlock of them is ErrBadBlob.
func TestBlockEncoding3Frames(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	var samples [][]byte
	for i := range 200 {
		samples = append(samples, fmt.Appendf(nil, "spotify:track:%06d {\"type\":\"playlist\",\"id\":%d}", i*7, i%13))
	}
	dict, err := trainDict(samples, zstd.SpeedBetterCompression)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderDict(dict), zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	dec, err := newBlockDecoder(dict, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	decs, err := newBlockDecoders(dict, 1)
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]byte{
		"one byte":          {7},
		"text":              fmt.Appendf(nil, "%s%s", samples[3], samples[150]),
		"random 40 B":       random(40),
		"random 2 KiB":      random(2 << 10),
		"zeros 5 KiB":       make([]byte, 5<<10),
		"text 100 KiB":      bytes.Repeat(samples[9], (100<<10)/len(samples[9])),
		"random 200 KiB":    random(200 << 10),
		"text and 1 random": append(bytes.Repeat(samples[1], 30), random(300)...),
	}
	tags := map[byte]int{}
	for name, in := range inputs {
		z := enc.EncodeAll(in, nil)
		c, ok := compactFrame(z)
		if !ok {
			t.Fatalf("%s: not compacted", name)
		}
		tags[c[0]]++
		if c[0] != frameTagStripped && len(c) > len(z)-5 {
			t.Errorf("%s: a one-block frame of %d bytes compacted to %d", name, len(z), len(c))
		}
		e, ok := expandFrame(nil, c, 1)
		if !ok {
			t.Fatalf("%s: not expanded", name)
		}
		got, err := dec.DecodeAll(e, nil)
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("%s: %d bytes back (want %d), %v", name, len(got), len(in), err)
		}
	}
	for _, tag := range []byte{frameTagStripped, frameTagCompressed, frameTagRaw} {
		if tags[tag] == 0 {
			t.Errorf("no frame stored with tag %d (%v)", tag, tags)
		}
	}
	for name, v := range map[string][]byte{
		"empty":                {},
		"tag 3":                {3, 1, 2, 3},
		"empty compressed":     {frameTagCompressed},
		"raw past 128 KiB":     append([]byte{frameTagRaw}, make([]byte, blockMaxSize+1)...),
		"stripped, dictionary": {frameTagStripped, 0x21, 9, 1, 0, 0},
	} {
		if _, ok := expandFrame(nil, v, 1); ok {
			t.Errorf("%s: expanded", name)
		}
	}
	b := &Blob{Marker: BlobMarker{Encoding: BlobBlockEncoding3}, decs: decs, dictID: 1}
	if _, err := b.DecodeBlock(nil, []byte{3, 1, 2}); !errors.Is(err, ErrBadBlob) {
		t.Errorf("a bad tag: %v", err)
	}
	if _, err := b.DecodeBlock(nil, []byte{frameTagCompressed, 0xff, 0xff, 0xff}); !errors.Is(err, ErrBadBlob) {
		t.Errorf("a damaged block: %v", err)
	}
	// A stripped frame whose header claims 200 MiB in a few bytes is a bad
	// blob before the decoder allocates what the header says.
	for _, enc := range []string{BlobBlockEncoding2, BlobBlockEncoding3} {
		lie := []byte{0xc0 | 0x20} // 8-byte content size, single segment, no dictionary ID (stripped)
		lie = binary.LittleEndian.AppendUint64(lie, 200<<20)
		lie = append(lie, 1, 0, 0) // a last raw block of no bytes
		if enc == BlobBlockEncoding3 {
			lie = append([]byte{frameTagStripped}, lie...)
		}
		b := &Blob{Marker: BlobMarker{Encoding: enc}, decs: decs, dictID: 1}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := b.DecodeBlock(nil, lie)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrBadBlob) {
			t.Errorf("%s: a frame claiming 200 MiB in %d bytes: %v", enc, len(lie), err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
			t.Errorf("%s: a frame claiming 200 MiB in %d bytes: %d bytes allocated", enc, len(lie), n)
		}
	}
}

// testCoGroupedBlock returns a co-grouped blob (its decoders made under
// the current GOMAXPROCS) and one compressed block of three rows, with the
// rows it holds.
func testCoGroupedBlock(t testing.TB) (*Blob, []byte, []parquet.Row) {
	t.Helper()
	var samples [][]byte
	for i := range 200 {
		samples = append(samples, fmt.Appendf(nil, "spotify:track:%06d {\"type\":\"playlist\",\"id\":%d}", i*7, i%13))
	}
	g := parquet.Group{"k": parquet.Leaf(parquet.Int64Type), "s": parquet.String()}
	schema := parquet.NewSchema("r", g)
	p := testBlobPlan(t, schema, &BlobOptions{Column: "blob", Fields: []string{"s"}, Codec: BlobCodecZstdDict})
	kl, _ := schema.Lookup("k")
	sl, _ := schema.Lookup("s")
	cols := [][]parquet.Value{{parquet.Int64Value(5).Level(0, 0, kl.ColumnIndex)}, nil}
	for i := range 3 {
		cols[1] = append(cols[1], parquet.ByteArrayValue(bytes.Repeat(samples[i*40], 3)).Level(0, 0, sl.ColumnIndex))
	}
	raw := p.encodeBlock(nil, 3, cols)
	in, err := parseBlob(p.marker)
	if err != nil {
		t.Fatal(err)
	}
	want, err := in.decodeRaw(nil, raw)
	if err != nil {
		t.Fatal(err)
	}
	st := newBlockStats(in)
	st.add(want)
	// The files' encoding: a one-block frame stored compact, read back
	// by expandFrame with the 256 KiB window (compactWindow).
	m := p.marker
	m.Encoding, m.Fields = BlobBlockEncoding3, st.fields([][]byte{raw})
	dict, err := trainDict(append(samples, raw), zstd.SpeedDefault)
	if err != nil {
		t.Fatal(err)
	}
	m.Dict = dict
	b, err := NewBlob(m)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderDict(dict), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	v, ok := compactFrame(enc.EncodeAll(b.encodeBlock2(nil, want), nil))
	if !ok || v[0] != frameTagCompressed {
		t.Fatalf("block not stored as a compressed one-block frame (%v)", ok)
	}
	return b, v, want
}

// TestBlockDecoderAllocatesOnce checks that a co-grouped file's decoder
// allocates its block buffers once, not once per block decoder in turn: a
// light lookup decodes one small block per file, and with GOMAXPROCS block
// decoders each of a file's first lookups allocated another 128 KiB
// (blockDecoders).
func TestBlockDecoderAllocatesOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // the decoders are made under 4 Ps
	b, v, want := testCoGroupedBlock(t)
	if _, err := b.DecodeBlock(nil, v); err != nil { // the first block allocates the buffers
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range 8 {
		rows, err := b.DecodeBlock(nil, v)
		if err != nil || len(rows) != 3 || !bytes.Equal(rows[2][1].ByteArray(), want[2][1].ByteArray()) {
			t.Fatalf("decoded %v, %v", rows, err)
		}
	}
	runtime.ReadMemStats(&m1)
	// Each block's rows and their bytes: about 1 KiB; another block
	// decoder's first frame: ≥ 128 KiB.
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 64<<10 {
		t.Errorf("8 more blocks allocated %d bytes: the decoder's block buffers were allocated again", got)
	}
}

// TestBlockDecodersConcurrent checks that lookups of one co-grouped file
// decode blocks at the same time: with every decoder made busy (held by
// the test), a DecodeBlock still completes, on a decoder of its own, up to
// one per P; past that it waits for one to be put back. With one decoder
// per file, a hot file's lookups were decoded one at a time.
func TestBlockDecodersConcurrent(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3)) // the decoders are made under 3 Ps
	b, v, want := testCoGroupedBlock(t)
	decode := func() chan error {
		done := make(chan error, 1)
		go func() {
			rows, err := b.DecodeBlock(nil, v)
			if err == nil && (len(rows) != len(want) || !bytes.Equal(rows[2][1].ByteArray(), want[2][1].ByteArray())) {
				err = fmt.Errorf("decoded %v", rows)
			}
			done <- err
		}()
		return done
	}
	var held []*zstd.Decoder
	for range 2 {
		d, err := b.decs.get()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, d)
		select {
		case err := <-decode():
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("a block of a file whose %d decoder(s) are busy did not decode: concurrent lookups of a file wait on each other", len(held))
		}
	}
	if b.decs.made() != 3 {
		t.Errorf("%d decoders made, want 3 (one per P)", b.decs.made())
	}
	// The third decoder is in use: the next decode waits for one.
	d, err := b.decs.get()
	if err != nil {
		t.Fatal(err)
	}
	held = append(held, d)
	done := decode()
	select {
	case err := <-done:
		t.Fatalf("decoded past the bound of 3 decoders (%v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	b.decs.put(held[0])
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, d := range held[1:] {
		b.decs.put(d)
	}
	// The burst over, the file keeps idleBlockDecoders of them.
	if b.decs.made() != idleBlockDecoders || len(b.decs.idle) != idleBlockDecoders {
		t.Errorf("%d decoders made, %d idle; want %d and %d", b.decs.made(), len(b.decs.idle), idleBlockDecoders, idleBlockDecoders)
	}
}

// BenchmarkDecodeBlockParallel decodes one small block of a co-grouped
// file from every P at once, as concurrent lookups of a hot file do
// (blockDecoders): ns/op is the wall time per block over all Ps.
func BenchmarkDecodeBlockParallel(b *testing.B) {
	blob, v, want := testCoGroupedBlock(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var rows []parquet.Row
		for pb.Next() {
			var err error
			if rows, err = blob.DecodeBlock(rows[:0], v); err != nil || len(rows) != len(want) {
				b.Fatalf("decoded %d rows, %v", len(rows), err)
			}
		}
	})
}
