package rowindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/pqrow"
)

// TestChunkDecoderMatchesValues decodes every column chunk of a file with
// several row groups of many small pages through chunkDecoder, as keys and
// as hoisted values, and compares each row with the encoding of its
// parquet.Value (encodeValue), read back through parquet-go's row reader:
// plain required columns (decoded straight into the output), an optional
// one with nulls, dictionary-encoded ones and a boolean (the value reader).
func TestChunkDecoderMatchesValues(t *testing.T) {
	type rec struct {
		I64  int64   `parquet:"i64"`
		I32  int32   `parquet:"i32"`
		F64  float64 `parquet:"f64"`
		S    string  `parquet:"s"`
		Opt  *int64  `parquet:"opt,optional"`
		Dict string  `parquet:"dict,dict"`
		DI   int64   `parquet:"di,dict"`
		B    bool    `parquet:"b"`
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[rec](&buf, parquet.PageBufferSize(512), parquet.MaxRowsPerRowGroup(3000))
	var rows []rec
	for i := range 7000 {
		r := rec{I64: int64(i*7919) - 1e6, I32: int32(i % 313), F64: float64(i) / 3, S: fmt.Sprint("s", i*i%997),
			Dict: fmt.Sprint("d", i%17), DI: int64(i % 29), B: i%3 == 0}
		if i%4 != 0 {
			v := int64(i)
			r.Opt = &v
		}
		rows = append(rows, r)
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(buf.Bytes())
	f, err := parquet.OpenFile(r, int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	chk, err := pqrow.NewChecker(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.RowGroups()) < 2 {
		t.Fatalf("%d row groups, want several", len(f.RowGroups()))
	}
	for rg, g := range f.RowGroups() {
		n := g.NumRows()
		want := make([]parquet.Row, n)
		rr := g.Rows()
		if k, err := rr.ReadRows(want); int64(k) != n {
			t.Fatalf("row group %d: read %d rows of %d: %v", rg, k, n, err)
		}
		rr.Close()
		for c, cc := range g.ColumnChunks() {
			if pages := countPages(t, cc); c == 0 && pages < 3 {
				t.Fatalf("column %d: %d pages, want several", c, pages)
			}
			if k := cc.Type().Kind(); k == parquet.Int32 || k == parquet.Int64 {
				// A key-id path's words: each row's key's last 8 bytes,
				// a null's flag.
				d := chunkDecoder{key: true}
				var out intKeys
				if err := d.decodeInts(cc, r, n, &out, chk.Chunk(rg, c)); err != nil {
					t.Fatalf("row group %d column %d: ints: %v", rg, c, err)
				}
				if len(out.vals) != int(n) || len(out.nulls) != 0 && len(out.nulls) != int(n) {
					t.Fatalf("row group %d column %d: %d words, %d null flags for %d rows", rg, c, len(out.vals), len(out.nulls), n)
				}
				nulls := 0
				for i := range int(n) {
					w := d.encodeValue(nil, want[i][c]) // as a key: empty when null
					if out.null(i) {
						nulls++
					}
					if out.null(i) != (len(w) == 0) || len(w) == 9 && binary.BigEndian.Uint64(w[1:]) != out.vals[i] {
						t.Fatalf("row group %d column %d row %d: word %x null %v, want key %x", rg, c, i, out.vals[i], out.null(i), w)
					}
				}
				if name := f.Schema().Columns()[c][0]; (name == "opt") != (nulls > 0) {
					t.Fatalf("row group %d column %s: %d null rows", rg, name, nulls)
				}
			}
			for _, key := range []bool{true, false} {
				d := chunkDecoder{key: key}
				var out chunkValues
				if err := d.decode(cc, r, n, &out, chk.Chunk(rg, c)); err != nil {
					t.Fatalf("row group %d column %d: %v", rg, c, err)
				}
				for i := range int(n) {
					if w := d.encodeValue(nil, want[i][c]); !bytes.Equal(out.row(i), w) {
						t.Fatalf("row group %d column %d key=%v row %d: decoded %x, want %x", rg, c, key, i, out.row(i), w)
					}
				}
			}
		}
	}
}

// countPages returns the number of data pages of a column chunk.
func countPages(t *testing.T, cc parquet.ColumnChunk) int {
	t.Helper()
	pages := cc.Pages()
	defer pages.Close()
	k := 0
	for {
		p, err := pages.ReadPage()
		if err != nil {
			return k
		}
		parquet.Release(p)
		k++
	}
}
