package rowindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"regexp"
	"testing"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/format"
)

// TestDirectPageLZ4Raw reads parquet-testing's LZ4_RAW page of 10,000 UUID
// strings with the direct page path: every row is a UUID (parquet-go v0.32
// reads them as empty strings, see knownUnusable).
func TestDirectPageLZ4Raw(t *testing.T) {
	b, err := os.ReadFile(parquetTesting + "/lz4_raw_compressed_larger.parquet")
	if err != nil {
		t.Skipf("parquet-testing data not available: %v", err)
	}
	md := openBytes(t, b).Metadata()
	cc := md.RowGroups[0].Columns[0].MetaData
	maxDef, _ := leafDefinitions(md.Schema)
	ci := colInfo{typ: cc.Type, maxDef: maxDef[0], codec: cc.Codec}
	p, own, err := parseRawPage(b[cc.DataPageOffset:cc.DataPageOffset+cc.TotalCompressedSize], ci)
	if err != nil {
		t.Fatal(err)
	}
	if !own || p.rows != 10000 {
		t.Fatalf("own %v rows %d, want a decompressed page of 10000 rows", own, p.rows)
	}
	cut, err := newPageCutter(p, ci, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	for r := 0; r < p.rows; r += 7 {
		v, err := cut.row(r)
		if err != nil {
			t.Fatal(err)
		}
		if !uuid.Match(v.ByteArray()) {
			t.Fatalf("row %d: %q is not a UUID", r, v.ByteArray())
		}
	}
	if _, err := cut.row(3); err == nil {
		t.Fatal("a byte-array row before the last one read: want an error")
	}
}

func openBytes(t *testing.T, b []byte) *parquet.File {
	t.Helper()
	f, err := parquet.OpenFile(bytesAt(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

type bytesAt []byte

func (b bytesAt) ReadAt(p []byte, off int64) (int, error) { return copy(p, b[off:]), nil }

// TestDeltaLengths decodes DELTA_LENGTH_BYTE_ARRAY values written by
// parquet-go's encoder: empty pages, one value, partial last blocks and
// miniblocks, lengths from 0 to a few thousand bytes.
func TestDeltaLengths(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 31, 32, 33, 127, 128, 129, 1000, 4099} {
		var vals []byte
		offs := []uint32{0}
		var want [][]byte
		for i := range n {
			l := rng.IntN(40)
			if i%97 == 5 {
				l = rng.IntN(3000)
			}
			v := make([]byte, l)
			for j := range v {
				v[j] = byte(rng.IntN(256))
			}
			want = append(want, v)
			vals = append(vals, v...)
			offs = append(offs, uint32(len(vals)))
		}
		enc, err := new(delta.LengthByteArrayEncoding).EncodeByteArray(nil, vals, offs)
		if err != nil {
			t.Fatal(err)
		}
		lens, data, err := deltaLengths(nil, enc)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if len(lens) != n || len(data) != len(vals) {
			t.Fatalf("n=%d: %d lengths, %d bytes; want %d, %d", n, len(lens), len(data), n, len(vals))
		}
		d := deltaLengthReader{lens: lens, data: data}
		for i := 0; i < n; i += 1 + i%3 {
			v, err := d.value(i)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(v.ByteArray(), want[i]) {
				t.Fatalf("n=%d value %d: %x, want %x", n, i, v.ByteArray(), want[i])
			}
		}
	}
	if _, _, err := deltaLengths(nil, []byte{0x80}); err == nil {
		t.Fatal("a truncated header: want an error")
	}
}

// TestDirectPageCorruptLZ4Raw: the direct path decompresses LZ4_RAW with
// the bounded decoder, so a page whose body no buffer decodes (the input
// that made parquet-go's codec allocate until the process died) is a
// corrupt-page error.
func TestDirectPageCorruptLZ4Raw(t *testing.T) {
	b, err := os.ReadFile(parquetTesting + "/lz4_raw_compressed_larger.parquet")
	if err != nil {
		t.Skipf("parquet-testing data not available: %v", err)
	}
	md := openBytes(t, b).Metadata()
	cc := md.RowGroups[0].Columns[0].MetaData
	maxDef, _ := leafDefinitions(md.Schema)
	ci := colInfo{typ: cc.Type, maxDef: maxDef[0], codec: cc.Codec}
	chunk := bytes.Clone(b[cc.DataPageOffset : cc.DataPageOffset+cc.TotalCompressedSize])
	_, n, err := parsePageHeader(chunk)
	if err != nil {
		t.Fatal(err)
	}
	copy(chunk[n:], []byte{0x1f, 'a', 0xff, 0xff, 0x00}) // a match before the output's start
	_, _, err = parseRawPage(chunk, ci)
	var pe *pqrow.PageError
	if !errors.As(err, &pe) || !errors.Is(err, pqrow.ErrCorrupt) {
		t.Fatalf("corrupt LZ4_RAW page: %v, want a *pqrow.PageError", err)
	}
}

// TestZstdStoredPages: parquet-go's ZSTD pages of incompressible values
// are frames of one raw block; the direct path cuts their values out of
// the page's bytes without decoding or copying them (zstdStored), and
// decodes every other frame. A stored frame whose block header is damaged
// is left to the decoder, which refuses it.
func TestZstdStoredPages(t *testing.T) {
	type rec struct {
		Rand  int32 `parquet:"rand"`
		Const int64 `parquet:"const"`
	}
	rng := rand.New(rand.NewPCG(3, 4))
	rows := make([]rec, 20000)
	for i := range rows {
		rows[i] = rec{Rand: rng.Int32(), Const: int64(i / 1000)}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[rec](&buf, parquet.Compression(&parquet.Zstd), parquet.PageBufferSize(16<<10))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	f := openBytes(t, b)
	md := f.Metadata()
	for col, wantStored := range []bool{true, false} {
		cc := md.RowGroups[0].Columns[col].MetaData
		ci := colInfo{typ: cc.Type, width: 4, codec: cc.Codec, leaf: col}
		if col == 1 {
			ci.width = 8
		}
		locs := f.OffsetIndexes()[col].PageLocations
		row := 0
		for _, loc := range locs {
			page := b[loc.Offset : loc.Offset+int64(loc.CompressedPageSize)]
			p, own, err := parseRawPage(page, ci)
			if err != nil {
				t.Fatalf("column %d page at %d: %v", col, loc.Offset, err)
			}
			if own == wantStored {
				t.Fatalf("column %d page at %d: decoded %v, want %v", col, loc.Offset, own, !wantStored)
			}
			if wantStored && (len(p.values) == 0 || &p.values[len(p.values)-1] != &page[len(page)-1]) {
				t.Fatalf("column %d page at %d: values not read in place", col, loc.Offset)
			}
			cut, err := newPageCutter(p, ci, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for r := range p.rows {
				v, err := cut.row(r)
				if err != nil {
					t.Fatal(err)
				}
				want := int64(rows[row].Const)
				got := v.Int64()
				if col == 0 {
					want, got = int64(rows[row].Rand), int64(v.Int32())
				}
				if got != want {
					t.Fatalf("column %d row %d: %d, want %d", col, row, got, want)
				}
				row++
			}
		}
		if row != len(rows) {
			t.Fatalf("column %d: %d rows read, want %d", col, row, len(rows))
		}
	}
	// A stored frame whose block claims one byte more than the page holds.
	loc := f.OffsetIndexes()[0].PageLocations[0]
	page := bytes.Clone(b[loc.Offset : loc.Offset+int64(loc.CompressedPageSize)])
	h, hlen, err := parsePageHeader(page)
	if err != nil {
		t.Fatal(err)
	}
	body := page[hlen:]
	size := int(h.UncompressedPageSize)
	if _, ok := zstdStored(body, size); !ok {
		t.Fatal("first page of the random column is not a stored frame")
	}
	bh := len(body) - size - 3 // the block header precedes the content
	v := uint32(body[bh]) | uint32(body[bh+1])<<8 | uint32(body[bh+2])<<16
	v += 1 << 3
	body[bh], body[bh+1], body[bh+2] = byte(v), byte(v>>8), byte(v>>16)
	if _, ok := zstdStored(body, size); ok {
		t.Fatal("a damaged stored frame read in place")
	}
	if _, _, err := parseRawPage(page, colInfo{typ: md.RowGroups[0].Columns[0].MetaData.Type, width: 4, codec: md.RowGroups[0].Columns[0].MetaData.Codec}); err == nil {
		t.Fatal("a damaged stored frame decoded")
	}
}

// TestZstdStoredOversizedBlock: a frame of one raw block larger than a
// block may be (128 KiB, or the frame's window) is damaged: zstdStored
// leaves it to the decoder, which refuses it, rather than reading its
// bytes in place. Frames of the same shape within the limits are read in
// place, as the decoder reads them.
func TestZstdStoredOversizedBlock(t *testing.T) {
	frame := func(n int, fhd byte, wd int) []byte {
		b := []byte{0x28, 0xb5, 0x2f, 0xfd, fhd}
		if wd >= 0 {
			b = append(b, byte(wd))
		}
		if fhd>>6 == 2 {
			b = binary.LittleEndian.AppendUint32(b, uint32(n))
		}
		bh := uint32(n)<<3 | 1 // last, raw
		b = append(b, byte(bh), byte(bh>>8), byte(bh>>16))
		for i := range n {
			b = append(b, byte(i*7))
		}
		return b
	}
	for _, c := range []struct {
		name string
		n    int
		fhd  byte
		wd   int // window descriptor, -1: single segment
		ok   bool
	}{
		{"single segment, 128 KiB", 128 << 10, 0xA0, -1, true},
		{"single segment, past 128 KiB", 128<<10 + 1, 0xA0, -1, false},
		{"window 1 KiB, block 1 KiB", 1 << 10, 0x00, 0x00, true},
		{"window 1 KiB, block past it", 1<<10 + 1, 0x00, 0x00, false},
		{"window 1.125 KiB, block 1.125 KiB", 1152, 0x00, 0x01, true},
		{"window 8 MiB, block past 128 KiB", 140000, 0x80, 0x68, false},
	} {
		b := frame(c.n, c.fhd, c.wd)
		got, ok := zstdStored(b, c.n)
		dec, err := decompress(format.Zstd, b, c.n)
		if ok != c.ok || (err == nil) != c.ok {
			t.Errorf("%s: stored %v, decoder error %v; want both to accept: %v", c.name, ok, err, c.ok)
		}
		if ok && !bytes.Equal(got, dec) {
			t.Errorf("%s: stored bytes differ from the decoder's", c.name)
		}
	}
}
