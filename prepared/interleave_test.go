package prepared

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/encoding/thrift"
)

// TestParseCopyClaimedSize: a copy whose ZSTD frame claims a content size
// its few bytes cannot hold is ErrBadFrames before anything is allocated
// for it (a decoder allocates the size a frame's header gives).
func TestParseCopyClaimedSize(t *testing.T) {
	m := &InterleaveMarker{}
	dec, err := m.Decoder()
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	z := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0} // single segment, 8-byte content size
	z = binary.LittleEndian.AppendUint64(z, 200<<20)
	z = append(z, 1, 0, 0) // a last raw block of no bytes
	b := append([]byte{}, copyMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(8+len(z)))
	b = binary.LittleEndian.AppendUint64(b, 0)
	b = append(b, z...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = ParseCopy(b, 10, []bool{false}, func(z []byte) ([]byte, error) { return dec.DecodeAll(z, nil) })
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrBadFrames) {
		t.Fatalf("copy claiming 200 MiB in %d bytes: %v", len(z), err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Fatalf("copy claiming 200 MiB in %d bytes: %d bytes allocated", len(z), n)
	}
}

// TestFrameNegativeLevelLength: a page header whose repetition levels'
// length is negative (its definition levels' length one more, so that
// they still sum to what the page holds) is an error from FrameFile,
// framed or interleaved, not a panic.
func TestFrameNegativeLevelLength(t *testing.T) {
	ctx := context.Background()
	st := fileStore(t)
	schema, rows := eventRows(t, genEvents(4, 2000))
	o := Options{Key: "user", PageBytes: 4096, Compression: &parquet.Uncompressed, Encodings: map[string]encoding.Encoding{}}
	for _, p := range schema.Columns() {
		o.Encodings[strings.Join(p, ".")] = &parquet.Plain
	}
	if _, err := Write(ctx, st, "p.parquet", schema, rows, o); err != nil {
		t.Fatal(err)
	}
	f, b := openFile(t, st, "p.parquet")
	name, _ := f.Schema().Lookup("name")
	loc := f.OffsetIndexes()[name.ColumnIndex].PageLocations[0]
	h, _, err := readPage(bytes.NewReader(b), loc, 0)
	if err != nil {
		t.Fatal(err)
	}
	old, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	if err != nil {
		t.Fatal(err)
	}
	dh := &h.DataPageHeaderV2.V
	if dh.RepetitionLevelsByteLength != 0 || dh.DefinitionLevelsByteLength == 0 {
		t.Fatalf("levels %d, %d", dh.RepetitionLevelsByteLength, dh.DefinitionLevelsByteLength)
	}
	dh.RepetitionLevelsByteLength, dh.DefinitionLevelsByteLength = -1, dh.DefinitionLevelsByteLength+1
	head, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	if err != nil || len(head) != len(old) {
		t.Fatalf("header of %d bytes, was %d: %v", len(head), len(old), err)
	}
	c := bytes.Clone(b)
	copy(c[loc.Offset:], head)
	for _, fo := range []FrameOptions{{}, {Interleave: []string{"name"}}} {
		var out bytes.Buffer
		if _, err := FrameFile(ctx, bytes.NewReader(c), int64(len(c)), &out, fo); err == nil {
			t.Fatalf("%+v: framed a page with levels of length -1", fo)
		}
	}
}
