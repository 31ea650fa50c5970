package jsonappend

import "testing"

// BenchmarkString: a row's text as the listening lake holds it (a JSON
// context with quotes to escape, a track URI).
func BenchmarkString(b *testing.B) {
	ctx := `{"type":"liked-songs","uri":"spotify:liked-songs:205df07a","device":"speaker","shuffle":true,"offline":false,"session":"8500381d4b308e5d"}`
	uri := "spotify:track:0000000000000000161036"
	buf := make([]byte, 0, 1024)
	b.SetBytes(int64(len(ctx) + len(uri)))
	for b.Loop() {
		buf = String(String(buf[:0], ctx, true), uri, true)
	}
}
