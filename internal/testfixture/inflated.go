package testfixture

import (
	"bytes"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// InflatedRow is the row type of InflatedPage's files.
type InflatedRow struct {
	ID   int64  `parquet:"id"`
	Name string `parquet:"name"`
}

// SoundFile writes n rows of InflatedRow with codec (no page index, so no
// page location points into the pages).
func SoundFile(t testing.TB, codec compress.Codec, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[InflatedRow](&buf, parquet.Compression(codec), parquet.PageBufferSize(4<<10))
	rows := make([]InflatedRow, n)
	for i := range rows {
		rows[i] = InflatedRow{ID: int64(i), Name: "ariadne-" + string(rune('a'+i%26))}
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// InflatedPage returns file b (written by SoundFile) with the header of its
// first column chunk's first page claiming usize uncompressed bytes: the
// header is re-encoded in place, and every footer offset after it moves by
// the change in its length. The page's bytes are as they were, so only the
// header lies (what a mutated size field looks like).
func InflatedPage(t testing.TB, b []byte, usize int32) []byte {
	t.Helper()
	var md format.FileMetaData
	n := int(uint32(b[len(b)-8]) | uint32(b[len(b)-7])<<8 | uint32(b[len(b)-6])<<16 | uint32(b[len(b)-5])<<24)
	start := len(b) - 8 - n
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), b[start:len(b)-8], &md); err != nil {
		t.Fatal(err)
	}
	m := &md.RowGroups[0].Columns[0].MetaData
	pos := m.DataPageOffset
	if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < pos {
		pos = m.DictionaryPageOffset
	}
	r := bytes.NewReader(b[pos:])
	var h format.PageHeader
	if err := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(r)).Decode(&h); err != nil {
		t.Fatal(err)
	}
	hlen := int64(len(b)-int(pos)) - int64(r.Len())
	h.UncompressedPageSize = usize
	nh, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	if err != nil {
		t.Fatal(err)
	}
	delta := int64(len(nh)) - hlen
	move := func(off *int64) {
		if *off > pos {
			*off += delta
		}
	}
	for i := range md.RowGroups {
		rg := &md.RowGroups[i]
		if rg.FileOffset > pos {
			rg.FileOffset += delta
		}
		for j := range rg.Columns {
			c := &rg.Columns[j]
			c.FileOffset = 0
			move(&c.MetaData.DataPageOffset)
			move(&c.MetaData.DictionaryPageOffset)
			move(&c.MetaData.BloomFilterOffset)
			c.ColumnIndexOffset, c.ColumnIndexLength, c.OffsetIndexOffset, c.OffsetIndexLength = 0, 0, 0, 0
		}
	}
	m.TotalCompressedSize += delta
	foot, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		t.Fatal(err)
	}
	out := append(append(append([]byte{}, b[:pos]...), nh...), b[pos+hlen:start]...)
	out = append(out, foot...)
	out = append(out, byte(len(foot)), byte(len(foot)>>8), byte(len(foot)>>16), byte(len(foot)>>24))
	return append(out, "PAR1"...)
}
