package bloom

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
)

// Guava's own test vectors for Hashing.murmur3_128() (seed 0): the hex of
// the 16 output bytes (h1 then h2, each little-endian).
func TestMurmur3Vectors(t *testing.T) {
	for in, want := range map[string]string{
		"": "00000000000000000000000000000000",
		"The quick brown fox jumps over the lazy dog": "6c1b07bc7bbc4be347939ac4a93c437a",
	} {
		h1, h2 := Murmur3x64_128([]byte(in), 0)
		var b [16]byte
		for i := range 8 {
			b[i] = byte(h1 >> (8 * i))
			b[8+i] = byte(h2 >> (8 * i))
		}
		if got := hex.EncodeToString(b[:]); got != want {
			t.Errorf("murmur3(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestSizing(t *testing.T) {
	for _, tc := range []struct {
		n     int64
		p     float64
		k     int
		words int
	}{
		{1, 0.01, 7, 1},        // m = 9 bits → 1 word
		{1000, 0.01, 7, 150},   // m = 9585 → 150 words
		{1000, 0.001, 10, 225}, // m = 14377 → 225 words
		{0, 0.03, 5, 1},        // n < 1 counts as 1
	} {
		f, err := New(tc.n, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		if f.NumHashes() != tc.k || len(f.words) != tc.words {
			t.Errorf("New(%d, %v): k=%d words=%d, want k=%d words=%d", tc.n, tc.p, f.NumHashes(), len(f.words), tc.k, tc.words)
		}
	}
	if _, err := New(1, 0.7); !errors.Is(err, ErrZeroBits) {
		t.Fatalf("want ErrZeroBits, got %v", err)
	}
	for _, p := range []float64{0, 1, -0.1} {
		if _, err := New(1, p); err == nil {
			t.Errorf("New(1, %v): want error", p)
		}
	}
}

func TestRoundTripAndFalsePositives(t *testing.T) {
	f, _ := New(1000, 0.01)
	for i := range 1000 {
		f.AddString(fmt.Sprint(i))
	}
	g, err := Unmarshal(f.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if !g.MightContainString(fmt.Sprint(i)) {
			t.Fatalf("false negative for %d", i)
		}
	}
	fp := 0
	for i := 1000; i < 101000; i++ {
		if g.MightContainString(fmt.Sprint(i)) {
			fp++
		}
	}
	if rate := float64(fp) / 100000; rate > 0.02 {
		t.Fatalf("false positive rate %.4f, want about 0.01", rate)
	}
	if g.Marshal()[0] != 1 || g.Marshal()[1] != 7 {
		t.Fatal("header")
	}
}

func TestUnmarshalCorrupt(t *testing.T) {
	good, _ := New(10, 0.01)
	b := good.Marshal()
	for name, bad := range map[string][]byte{
		"empty":     nil,
		"short":     b[:3],
		"strategy":  append([]byte{0}, b[1:]...),
		"truncated": b[:len(b)-1],
		"k=0":       append([]byte{1, 0}, b[2:]...),
	} {
		if _, err := Unmarshal(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: want ErrCorrupt, got %v", name, err)
		}
	}
}

func TestMaxUsefulProbes(t *testing.T) {
	if n := MaxUsefulProbes(0.01); n != 458 {
		t.Fatalf("MaxUsefulProbes(0.01) = %d", n)
	}
	if n := MaxUsefulProbes(0.001); n != 4602 && n != 4603 {
		t.Fatalf("MaxUsefulProbes(0.001) = %d", n)
	}
}

// TestAddHashSameBits: a filter fed hashes (HashString then AddHash) holds
// exactly the bits of one fed the values, so the file index can keep a
// file's 16-byte hashes instead of its strings until the filter is sized.
func TestAddHashSameBits(t *testing.T) {
	a, err := New(1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(1000, 0.01)
	for i := range 1000 {
		s := fmt.Sprintf("spotify:track:%d-é", i*7919)
		if i%3 == 0 {
			s = s[:i%len(s)] // short and empty strings too
		}
		a.Add([]byte(s))
		b.AddHash(HashString(s))
	}
	if !bytes.Equal(a.Marshal(), b.Marshal()) {
		t.Fatal("AddHash(HashString(s)) set other bits than Add([]byte(s))")
	}
	if a.Marshal()[6] == 0 && bytes.Count(a.Marshal()[6:], []byte{0}) == len(a.Marshal())-6 {
		t.Fatal("no bit set")
	}
}
