package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReadRanges: ReadRanges gives every range the bytes NewRangeReader
// gives, on a store that batches (file), one that does not (mem) and the
// wrappers that pass batching through (Counting, Sub); Counting counts one
// request per range; a range past the end is io.ErrUnexpectedEOF (not
// ErrStorage: a truncated object) after the ranges before it were read;
// and a batch reads the object at the key now, not a replaced one's handle,
// once the handle's last stat is older than the recheck window (within it,
// the object as that stat found it).
func TestReadRanges(t *testing.T) {
	ctx := context.Background()
	content := make([]byte, 5000)
	for i := range content {
		content[i] = byte(i * 7)
	}
	dir := t.TempDir()
	file := newFile(dir)
	mem := newMem("mem://")
	for _, s := range []Store{file, mem} {
		if err := WriteAll(ctx, s, "d/x.parquet", content, nil); err != nil {
			t.Fatal(err)
		}
	}
	counting := NewCounting(file)
	for _, tc := range []struct {
		name    string
		s       Store
		key     string
		batches bool
	}{
		{"file", file, "d/x.parquet", true},
		{"mem", mem, "d/x.parquet", false},
		{"counting", counting, "d/x.parquet", true},
		{"sub", Sub(file, "d"), "x.parquet", true},
		{"faulty", NewFaulty(file, Faults{}), "d/x.parquet", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := BatchesRanges(tc.s); got != tc.batches {
				t.Fatalf("BatchesRanges = %v, want %v", got, tc.batches)
			}
			offs := []int64{0, 4000, 17, 4990}
			sizes := []int{10, 1000, 3000, 10}
			bufs := make([][]byte, len(offs))
			for i := range bufs {
				bufs[i] = make([]byte, sizes[i])
			}
			counting.Reset()
			ns, err := ReadRanges(ctx, tc.s, tc.key, offs, bufs)
			if err != nil {
				t.Fatal(err)
			}
			for i, off := range offs {
				if ns[i] != sizes[i] || !bytes.Equal(bufs[i], content[off:off+int64(sizes[i])]) {
					t.Fatalf("range %d: %d bytes, not the object's", i, ns[i])
				}
			}
			if tc.name == "counting" {
				if st := counting.Snapshot(); st.Read.Requests != 4 || st.Read.Bytes != 4020 {
					t.Fatalf("counted %d requests, %d bytes; want 4, 4020", st.Read.Requests, st.Read.Bytes)
				}
			}
			// Past the end: the ranges before are read, then the short one.
			bufs = [][]byte{make([]byte, 100), make([]byte, 100), make([]byte, 100)}
			ns, err = ReadRanges(ctx, tc.s, tc.key, []int64{0, 4950, 100}, bufs)
			if !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrStorage) {
				t.Fatalf("range past the end: %v, want io.ErrUnexpectedEOF and not ErrStorage", err)
			}
			if ns[0] != 100 || !bytes.Equal(bufs[0], content[:100]) || ns[1] != 50 || ns[2] != 0 {
				t.Fatalf("range past the end: read %v", ns)
			}
			if _, err := ReadRanges(ctx, tc.s, "d/../x", offs[:1], bufs[:1]); err == nil {
				t.Fatal("an invalid key was read")
			}
		})
	}
	// A replaced object is read anew by the first batch after the recheck
	// window (the handle cache keys handles by inode); within it, a batch
	// reads the handle its last stat found, at that stat's size.
	if file.handles.recheck != recheckAfter || recheckAfter > 5*time.Second {
		t.Fatalf("recheck window %v, want recheckAfter (%v, at most a few seconds)", file.handles.recheck, recheckAfter)
	}
	file.handles.recheck = 200 * time.Millisecond
	p := filepath.Join(dir, "d", "x.parquet")
	buf := [][]byte{make([]byte, 4)}
	if _, err := ReadRanges(ctx, file, "d/x.parquet", []int64{0}, buf); err != nil {
		t.Fatal(err)
	}
	checked := time.Now()
	if err := os.WriteFile(p+".new", []byte("new!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRanges(ctx, file, "d/x.parquet", []int64{0}, buf); err != nil || !bytes.Equal(buf[0], content[:4]) {
		if time.Since(checked) < file.handles.recheck {
			t.Fatalf("replaced within the window: %q, %v; want the old object's bytes", buf[0], err)
		}
	}
	time.Sleep(time.Until(checked.Add(file.handles.recheck)))
	if _, err := ReadRanges(ctx, file, "d/x.parquet", []int64{0}, buf); err != nil || string(buf[0]) != "new!" {
		t.Fatalf("after replacement and the window: %q, %v", buf[0], err)
	}
	// NewRangeReader always reads the object at the key now.
	if err := os.WriteFile(p+".new", []byte("NEW!"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	if got := readRange(t, file, "d/x.parquet", 0, 4); got != "NEW!" {
		t.Fatalf("NewRangeReader after replacement within the window: %q", got)
	}
}
