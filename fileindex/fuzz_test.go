package fileindex

import "testing"

// FuzzLocateSnapshotSections: the decoders of a locate snapshot's sections
// (key blocks, temporal payloads, file id lists, tagged values) and of bloom
// bits never panic on any bytes.
func FuzzLocateSnapshotSections(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 1, 'a', 1, 0}, "a")
	f.Add([]byte{}, "")
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f}, "k")
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		_, _, _ = searchBlock(b, key)
		_, _ = decodeTemporal(b, 8)
		_, _ = readIDs(b, 8)
		_, _ = readTagged(b)
		_, _ = parseBloom(b)
	})
}
