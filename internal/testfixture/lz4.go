package testfixture

import (
	"bytes"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// LZ4RawFile is parquet-testing's data/lz4_raw_compressed.parquet: 4 rows,
// three LZ4_RAW columns (c0 timestamp as INT64, c1 binary, c2 double).
func LZ4RawFile() string { return Testdata() + "/parquet-testing/data/lz4_raw_compressed.parquet" }

// CorruptLZ4Raw returns LZ4RawFile with the body of its first LZ4_RAW data
// page replaced by a block that no buffer size decodes (a match reaching
// 65,535 bytes before the start of the output): the input that makes
// parquet-go v0.32.0's codec double its buffer until the process dies. It
// also returns that page's body. The test is skipped without the data.
func CorruptLZ4Raw(t testing.TB) (file, body []byte) {
	t.Helper()
	b, err := os.ReadFile(LZ4RawFile())
	if err != nil {
		t.Skip("parquet-testing data not available")
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, rg := range f.Metadata().RowGroups {
		for _, cc := range rg.Columns {
			m := cc.MetaData
			if m.Codec != format.Lz4Raw {
				continue
			}
			pos := m.DataPageOffset
			if d := m.DictionaryPageOffset; d > 0 && d < pos {
				pos = d
			}
			for end := pos + m.TotalCompressedSize; pos < end; {
				r := bytes.NewReader(b[pos:end])
				var h format.PageHeader
				if err := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(r)).Decode(&h); err != nil {
					t.Fatal(err)
				}
				start := end - int64(r.Len())
				size := int64(h.CompressedPageSize)
				pos = start + size
				if h.Type != format.DataPage || size < 8 {
					continue
				}
				out := bytes.Clone(b)
				body = out[start : start+size]
				// token: 1 literal, match length 15+; the literal; offset
				// 0xffff; no more length.
				copy(body, []byte{0x1f, 'a', 0xff, 0xff, 0x00})
				return out, body
			}
		}
	}
	t.Fatal("no LZ4_RAW data page found")
	return nil, nil
}
