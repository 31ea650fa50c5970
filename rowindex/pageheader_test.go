package rowindex

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// TestParsePageHeader decodes every page header of every column chunk of
// the parquet-testing files (v1, v2 and dictionary pages, with and without
// statistics, CRCs, every codec) with parsePageHeader and with parquet-go's
// Thrift decoder: the fields the direct path reads and the header length
// must agree. Truncated headers must fail, never panic.
func TestParsePageHeader(t *testing.T) {
	paths, _ := filepath.Glob(parquetTesting + "/*.parquet")
	if len(paths) == 0 {
		t.Skip("parquet-testing data not available")
	}
	headers := 0
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, ok := tryOpenBytes(b)
		if !ok {
			continue
		}
		for _, rg := range f.Metadata().RowGroups {
			for _, cc := range rg.Columns {
				md := cc.MetaData
				off := md.DataPageOffset
				if d := md.DictionaryPageOffset; d > 0 && d < off {
					off = d
				}
				end := off + md.TotalCompressedSize
				for off < end && off >= 0 && end <= int64(len(b)) {
					r := bytes.NewReader(b[off:end])
					var want format.PageHeader
					if err := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(r)).Decode(&want); err != nil {
						break
					}
					wantLen := int(end-off) - r.Len()
					got, n, err := parsePageHeader(b[off:end])
					if err != nil {
						t.Fatalf("%s at %d: %v", filepath.Base(p), off, err)
					}
					if n != wantLen || !sameHeader(got, want) {
						t.Fatalf("%s at %d: got %+v (%d bytes), want %+v (%d bytes)", filepath.Base(p), off, got, n, want, wantLen)
					}
					for k := 0; k < n; k++ {
						if _, _, err := parsePageHeader(b[off : off+int64(k)]); err == nil {
							t.Fatalf("%s at %d: a header cut to %d of %d bytes parsed", filepath.Base(p), off, k, n)
						}
					}
					headers++
					off += int64(n) + int64(want.CompressedPageSize)
				}
			}
		}
	}
	if headers < 100 {
		t.Fatalf("only %d page headers compared", headers)
	}
	t.Logf("%d page headers", headers)
}

// sameHeader compares the fields parsePageHeader reads.
func sameHeader(a, b format.PageHeader) bool {
	if a.Type != b.Type || a.UncompressedPageSize != b.UncompressedPageSize || a.CompressedPageSize != b.CompressedPageSize {
		return false
	}
	if a.DataPageHeader.Valid != b.DataPageHeader.Valid || a.DataPageHeaderV2.Valid != b.DataPageHeaderV2.Valid ||
		a.DictionaryPageHeader.Valid != b.DictionaryPageHeader.Valid {
		return false
	}
	d1, d2 := a.DataPageHeader.V, b.DataPageHeader.V
	d1.Statistics, d2.Statistics = format.Statistics{}, format.Statistics{}
	v1, v2 := a.DataPageHeaderV2.V, b.DataPageHeaderV2.V
	v1.Statistics, v2.Statistics = format.Statistics{}, format.Statistics{}
	p1, p2 := a.DictionaryPageHeader.V, b.DictionaryPageHeader.V
	p1.IsSorted, p2.IsSorted = false, false
	return reflect.DeepEqual(d1, d2) && reflect.DeepEqual(v1, v2) && reflect.DeepEqual(p1, p2)
}

func tryOpenBytes(b []byte) (f *parquet.File, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f, err := parquet.OpenFile(bytesAt(b), int64(len(b)), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	return f, err == nil
}
