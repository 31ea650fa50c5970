package rowindex

import (
	"os"
	"regexp"
	"testing"

	"github.com/parquet-go/parquet-go"
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
	cut, err := newPageCutter(p, ci, nil)
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
