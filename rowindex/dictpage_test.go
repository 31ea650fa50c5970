package rowindex

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// dictPage returns an uncompressed PLAIN dictionary page claiming n values
// over body.
func dictPage(t *testing.T, n int32, body []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	h := format.PageHeader{Type: format.DictionaryPage, UncompressedPageSize: int32(len(body)), CompressedPageSize: int32(len(body))}
	h.DictionaryPageHeader.Valid = true
	h.DictionaryPageHeader.V = format.DictionaryPageHeader{NumValues: n, Encoding: format.Plain}
	if err := thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&buf)).Encode(&h); err != nil {
		t.Fatal(err)
	}
	return append(buf.Bytes(), body...)
}

// TestParseDictionary checks that a dictionary's values are made on demand
// as its page holds them, and that a page whose header claims more values
// than its bytes can hold is refused before anything is allocated for them.
func TestParseDictionary(t *testing.T) {
	var body []byte
	for _, s := range []string{"a", "", "spotify:track:1"} {
		body = binary.LittleEndian.AppendUint32(body, uint32(len(s)))
		body = append(body, s...)
	}
	d, err := parseDictionary(dictPage(t, 3, body), colInfo{typ: format.ByteArray, codec: format.Uncompressed})
	if err != nil {
		t.Fatal(err)
	}
	if d.n != 3 || string(d.value(0).ByteArray()) != "a" || len(d.value(1).ByteArray()) != 0 || string(d.value(2).ByteArray()) != "spotify:track:1" {
		t.Errorf("byte arrays: %d values %q %q %q", d.n, d.value(0).ByteArray(), d.value(1).ByteArray(), d.value(2).ByteArray())
	}
	ints := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 7), uint64(1<<40))
	d, err = parseDictionary(dictPage(t, 2, ints), colInfo{typ: format.Int64, width: 8, codec: format.Uncompressed})
	if err != nil || d.n != 2 || d.value(0).Int64() != 7 || d.value(1).Int64() != 1<<40 {
		t.Errorf("int64: %v, %v", d, err)
	}
	for name, c := range map[string]struct {
		n    int32
		body []byte
		ci   colInfo
	}{
		"byte arrays claiming 2^31-1 values": {1<<31 - 1, body, colInfo{typ: format.ByteArray, codec: format.Uncompressed}},
		"a length past the page":             {1, binary.LittleEndian.AppendUint32(nil, 100), colInfo{typ: format.ByteArray, codec: format.Uncompressed}},
		"int64s claiming more than 8 bytes":  {3, ints, colInfo{typ: format.Int64, width: 8, codec: format.Uncompressed}},
		"a negative count":                   {-1, ints, colInfo{typ: format.Int64, width: 8, codec: format.Uncompressed}},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := parseDictionary(dictPage(t, c.n, c.body), c.ci)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: parsed", name)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("%s: %d bytes allocated", name, got)
		}
	}
}
