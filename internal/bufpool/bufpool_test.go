package bufpool

import "testing"

func TestGetPut(t *testing.T) {
	for _, tc := range []struct{ n, wantCap int }{
		{0, 1}, {1, 1}, {3, 4}, {4096, 4096}, {4097, 8192}, {MaxSize, MaxSize}, {MaxSize + 1, MaxSize + 1},
	} {
		b := Get(tc.n)
		if len(b) != tc.n || cap(b) != tc.wantCap {
			t.Errorf("Get(%d): len %d cap %d, want len %d cap %d", tc.n, len(b), cap(b), tc.n, tc.wantCap)
		}
		Put(b)
	}
	// A buffer given back comes out again at the same class, resized.
	b := Get(5000)
	b[0] = 7
	Put(b)
	for range 100 { // sync.Pool may drop it; the length must be right either way
		if c := Get(6000); len(c) != 6000 || cap(c) != 8192 {
			t.Fatalf("Get(6000) after Put: len %d cap %d", len(c), cap(c))
		}
	}
	// Buffers of no class's capacity are not pooled (nothing to observe
	// but that Put does not panic and Get still sizes right).
	Put(make([]byte, 10, 12))
	Put(nil)
	if c := Get(10); len(c) != 10 || cap(c) != 16 {
		t.Fatalf("Get(10): len %d cap %d", len(c), cap(c))
	}
}
