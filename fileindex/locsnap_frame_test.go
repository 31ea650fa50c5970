package fileindex

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"testing"
)

// TestFrameLocSnapSettles lays out directories whose section offsets sit
// in a run just below a power of ten, so that each byte the header grows
// pushes one more offset over it and adds a digit to the header again (a
// cascade). Before the shift grew with slack, a cascade longer than a few
// steps failed with "did not settle" (seen on a large index's second update
// in the differential tests against the Spark library).
func TestFrameLocSnapSettles(t *testing.T) {
	for _, run := range []int{0, 1, 3, 5, 40, 1000} {
		t.Run(fmt.Sprintf("cascade%d", run), func(t *testing.T) {
			const bodyLen = 200000
			body := bytes.Repeat([]byte{7}, bodyLen)
			mk := func(base int64) locSnapDir {
				dir := locSnapDir{TableID: "t", Version: 3, NumFiles: 2, Files: locSection{Off: 0, Len: 10}}
				col := locSnapColumn{Name: "c", Kind: "exact", Type: `"long"`}
				for i := range run {
					col.Blocks = append(col.Blocks, locBlock{First: []byte{byte(i)}, locSection: locSection{Off: base - int64(i), Len: 1}})
				}
				dir.Columns = []locSnapColumn{col}
				return dir
			}
			// The header's length with every offset at 5 digits (base
			// 99999 keeps them there unshifted); the run then ends right
			// at 10^5 once shifted by it.
			d0 := mk(99999)
			js, err := json.Marshal(d0)
			if err != nil {
				t.Fatal(err)
			}
			first := int64(locSnapHeader + len(js))
			dir := mk(100000 - first)
			out, err := frameLocSnap(dir, body)
			if err != nil {
				t.Fatal(err)
			}
			dirLen := int64(binary.LittleEndian.Uint32(out[8:]))
			shift := locSnapHeader + dirLen
			js = out[locSnapHeader:shift]
			if crc32.Checksum(js, locSnapCRC) != binary.LittleEndian.Uint32(out[12:]) {
				t.Fatal("directory checksum mismatch")
			}
			var got locSnapDir
			if err := json.Unmarshal(js, &got); err != nil {
				t.Fatal(err)
			}
			if got.Size != int64(len(out)) || !bytes.Equal(out[shift:], body) {
				t.Fatalf("size %d, object %d bytes, body at %d", got.Size, len(out), shift)
			}
			if got.Files.Off != shift {
				t.Fatalf("files section at %d, want %d", got.Files.Off, shift)
			}
			for i, b := range got.Columns[0].Blocks {
				if want := dir.Columns[0].Blocks[i].Off + shift; b.Off != want {
					t.Fatalf("block %d at %d, want %d", i, b.Off, want)
				}
			}
		})
	}
}
