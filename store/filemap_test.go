//go:build unix && !ariadne_nomap

package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// TestReadRangesMapped: the file store's ReadRanges reads through a mapping
// of the file and gives what pread would as the file changes in place
// under a cached handle: bytes rewritten in place are read anew, a file
// grown past its mapping is read past it (and across its end), a file
// truncated in place gives io.ErrUnexpectedEOF for ranges past its new end,
// and a copy out of the mapping that faults on the truncated pages (a
// truncation between the stat and the copy) is io.ErrUnexpectedEOF, not a
// crash. Every batch stats the file here (no recheck window: TestReadRanges
// covers it).
func TestReadRangesMapped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs := newFile(dir)
	defer fs.Close()
	fs.handles.recheck = 0
	content := make([]byte, 3*4096+100)
	for i := range content {
		content[i] = byte(i * 13)
	}
	if err := WriteAll(ctx, fs, "x", content, nil); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "x")
	read := func(off int64, n int) ([]byte, error) {
		t.Helper()
		buf := make([]byte, n)
		_, err := ReadRanges(ctx, fs, "x", []int64{off}, [][]byte{buf})
		return buf, err
	}
	if b, err := read(4000, 200); err != nil || !bytes.Equal(b, content[4000:4200]) {
		t.Fatalf("first read: %v", err)
	}
	fs.handles.mu.Lock()
	h := fs.handles.byPath[p].Value.(*fileHandle)
	fs.handles.mu.Unlock()
	m := h.mapping()
	if len(m) != len(content) {
		t.Fatalf("mapping of %d bytes, want the file's %d", len(m), len(content))
	}
	// Rewritten in place (same inode): the new bytes.
	w, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteAt([]byte("rewritten"), 4100); err != nil {
		t.Fatal(err)
	}
	copy(content[4100:], "rewritten")
	if b, err := read(4000, 200); err != nil || !bytes.Equal(b, content[4000:4200]) {
		t.Fatalf("after an in-place rewrite: %q, %v", b, err)
	}
	// Grown in place past the mapping: read by pread, also across the
	// mapping's end.
	tail := bytes.Repeat([]byte("tail"), 1000)
	if _, err := w.WriteAt(tail, int64(len(content))); err != nil {
		t.Fatal(err)
	}
	content = append(content, tail...)
	for _, r := range [][2]int{{len(m) - 50, 100}, {len(m) + 10, 500}} {
		if b, err := read(int64(r[0]), r[1]); err != nil || !bytes.Equal(b, content[r[0]:r[0]+r[1]]) {
			t.Fatalf("grown file at %d: %v", r[0], err)
		}
	}
	// Truncated in place: past the new end is a short read.
	if err := w.Truncate(100); err != nil {
		t.Fatal(err)
	}
	if _, err := read(8192, 100); !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrStorage) {
		t.Fatalf("truncated file: %v, want io.ErrUnexpectedEOF", err)
	}
	if b, err := read(0, 100); err != nil || !bytes.Equal(b, content[:100]) {
		t.Fatalf("truncated file's first bytes: %v", err)
	}
	// The mapping still spans the old size: a copy from its pages past the
	// new end faults, and the fault is a short read.
	if n, err := copyMapped(make([]byte, 100), m, 8192); !errors.Is(err, io.ErrUnexpectedEOF) || n != 0 {
		t.Fatalf("copy from truncated pages: %d bytes, %v; want io.ErrUnexpectedEOF", n, err)
	}
}

// TestReadRangesMappedTruncatedAfterStat: a file truncated between the
// batch's stat and the copy out of its mapping (the copy faults on the
// pages past the new end) is a short read, io.ErrUnexpectedEOF as pread's
// would be (the row index then reports the file changed), not a storage
// failure (ErrStorage).
func TestReadRangesMappedTruncatedAfterStat(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fs := newFile(dir)
	defer fs.Close()
	content := bytes.Repeat([]byte("0123456789abcdef"), 3*4096/16+10)
	if err := WriteAll(ctx, fs, "x", content, nil); err != nil {
		t.Fatal(err)
	}
	h, size, err := fs.openRead(ctx, "x", 8192)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.handles.release(h)
	if len(h.mapping()) != len(content) {
		t.Fatal("file not mapped")
	}
	h.mapped(0, int64(len(content))) // read before: copied out of the mapping
	if err := os.Truncate(filepath.Join(dir, "x"), 100); err != nil {
		t.Fatal(err)
	}
	// The stat's size (before the truncation) puts the range in the file.
	n, err := h.readRange("x", make([]byte, 100), 8192, size)
	if !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrStorage) || n != 0 {
		t.Fatalf("range past a truncation after the stat: %d bytes, %v; want io.ErrUnexpectedEOF, not ErrStorage", n, err)
	}
	// Within the new size: read.
	buf := make([]byte, 50)
	if _, err := h.readRange("x", buf, 10, size); err != nil || !bytes.Equal(buf, content[10:60]) {
		t.Fatalf("range within the truncated file: %v", err)
	}
}

// TestMappedOnSecondRead: a range is copied out of the mapping only when
// every 64 KiB window it spans was read before (the first touch of a
// window through a mapping faults, dearer than a pread); its first read
// marks its windows.
func TestMappedOnSecondRead(t *testing.T) {
	h := &fileHandle{seen: make([]atomic.Uint64, 2)} // 128 windows
	w := int64(mapWindow)
	for i, c := range []struct {
		off, n int64
		want   bool
	}{
		{100, 6000, false},         // window 0, first read
		{5000, 3000, true},         // window 0 again
		{w - 10, 20, false},        // windows 0 and 1: 1 is new
		{w + 5, 100, true},         // window 1, read by the previous range
		{3 * w, 2 * w, false},      // windows 3–5
		{4*w + 7, 1, true},         // window 4
		{63 * w, 2 * w, false},     // across the first word of bits
		{64*w + 1, 10, true},       // window 64
		{0, 0, true},               // empty
		{127*w + 10, 10, false},    // the last window
		{127*w + 20, w - 20, true}, // the last window again
	} {
		if got := h.mapped(c.off, c.n); got != c.want {
			t.Errorf("range %d [%d, +%d): mapped %v, want %v", i, c.off, c.n, got, c.want)
		}
	}
}
