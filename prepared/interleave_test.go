package prepared

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
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
