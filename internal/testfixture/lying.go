package testfixture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// BadData47662 is parquet-testing's bad_data/ARROW-GH-47662.parquet: a
// required FIXED_LEN_BYTE_ARRAY(4) column whose footer counts 105 nulls and
// whose PLAIN pages are shorter than their value counts (readers that pad
// them return made-up zeros below the footer's minimum).
func BadData47662() string { return Testdata() + "/parquet-testing/bad_data/ARROW-GH-47662.parquet" }

// LyingRow is a row of the files Lying writes: id is required, name is
// optional (every 10th row null).
type LyingRow struct {
	ID   int64   `parquet:"id"`
	Name *string `parquet:"name,optional"`
}

// Lies a Lying file can tell, each one thing its footer promises that its
// pages do not keep.
const (
	LieNone         = "none"          // a truthful file
	LieRows         = "rows"          // row group and chunks claim 5 more rows than the pages hold
	LieGroupRows    = "group-rows"    // the row group alone claims 5 more rows
	LieNulls        = "nulls"         // the optional column's null count is 7 too many
	LieRequiredNull = "required-null" // the required column claims 2 nulls
	LieMax          = "max"           // the id column's max is below its largest value
	LieMin          = "min"           // the name column's min is above its smallest value
	LieOffset       = "offset"        // a chunk's pages lie past the end of the file
)

// Lies lists every lie but LieNone.
var Lies = []string{LieRows, LieGroupRows, LieNulls, LieRequiredNull, LieMax, LieMin, LieOffset}

// Lying returns a valid Parquet file of n rows (ids 1..n, one row group,
// statistics written) whose footer is then rewritten to tell lie.
func Lying(t testing.TB, n int, lie string) []byte {
	t.Helper()
	rows := make([]LyingRow, n)
	for i := range rows {
		rows[i].ID = int64(i + 1)
		if i%10 != 9 {
			s := fmt.Sprintf("name-%05d", i+1)
			rows[i].Name = &s
		}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[LyingRow](&buf, parquet.PageBufferSize(256))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := RewriteFooter(buf.Bytes(), func(md *format.FileMetaData) {
		rg := &md.RowGroups[0]
		id, name := &rg.Columns[0].MetaData, &rg.Columns[1].MetaData
		switch lie {
		case LieNone:
		case LieRows:
			rg.NumRows += 5
			md.NumRows += 5
			id.NumValues += 5
			name.NumValues += 5
		case LieGroupRows:
			rg.NumRows += 5
			md.NumRows += 5
		case LieNulls:
			name.Statistics.NullCount += 7
		case LieRequiredNull:
			id.Statistics.NullCount = 2
		case LieMax:
			id.Statistics.MaxValue = binary.LittleEndian.AppendUint64(nil, uint64(n/2))
		case LieMin:
			name.Statistics.MinValue = []byte("name-00002")
		case LieOffset:
			name.DataPageOffset += 1 << 20
			name.DictionaryPageOffset = 0
		default:
			t.Fatalf("unknown lie %q", lie)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RewriteFooter decodes the footer of the Parquet file b, lets edit change
// it, and returns the file with the re-encoded footer.
func RewriteFooter(b []byte, edit func(*format.FileMetaData)) ([]byte, error) {
	if len(b) < 12 || string(b[len(b)-4:]) != "PAR1" {
		return nil, fmt.Errorf("not a parquet file")
	}
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	start := len(b) - 8 - n
	if start < 4 {
		return nil, fmt.Errorf("bad footer length %d", n)
	}
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[start:len(b)-8], &md); err != nil {
		return nil, err
	}
	edit(&md)
	foot, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		return nil, err
	}
	out := append(append([]byte{}, b[:start]...), foot...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(foot)))
	return append(out, "PAR1"...), nil
}
