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

// TestReadRangesGrownInWindow: within the recheck window a batch trusts
// its handle's last stat, but a range past the size that stat saw makes it
// look at the open file again before failing: a file grown in place is
// read at its new size at once; a range past the end of a file truncated
// in place still fails as past the end (io.ErrUnexpectedEOF, not
// ErrStorage); and a replaced file is still read as it was (its old inode,
// whose end a range past fails), as documented for the window.
func TestReadRangesGrownInWindow(t *testing.T) {
	ctx := context.Background()
	content := make([]byte, 12000)
	for i := range content {
		content[i] = byte(i*7 + i/256)
	}
	dir := t.TempDir()
	file := newFile(dir)
	defer file.Close()
	file.handles.recheck = time.Hour // every batch below is within the window
	p := filepath.Join(dir, "x.parquet")
	if err := os.WriteFile(p, content[:5000], 0o644); err != nil {
		t.Fatal(err)
	}
	read := func(off int64, n int) ([]byte, error) {
		buf := [][]byte{make([]byte, n)}
		_, err := ReadRanges(ctx, file, "x.parquet", []int64{off}, buf)
		return buf[0], err
	}
	if _, err := read(0, 10); err != nil { // caches the handle at 5000 bytes
		t.Fatal(err)
	}
	// Grown in place (appended to): the new bytes are read at once.
	fh, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.Write(content[5000:8000]); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	for _, r := range []struct {
		off int64
		n   int
	}{{4990, 100}, {7000, 1000}, {100, 50}} {
		got, err := read(r.off, r.n)
		if err != nil || !bytes.Equal(got, content[r.off:r.off+int64(r.n)]) {
			t.Fatalf("grown in place, range %d+%d: %v; want the file's new bytes", r.off, r.n, err)
		}
	}
	if _, err := read(7990, 100); !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrStorage) {
		t.Fatalf("past the grown file's end: %v, want io.ErrUnexpectedEOF", err)
	}
	// Truncated in place: past the new end fails as past the end, whether
	// the range lies within the size last seen or beyond it.
	if err := os.Truncate(p, 6000); err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{7000, 7990} {
		if _, err := read(off, 100); !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrStorage) {
			t.Fatalf("truncated in place, range at %d: %v, want io.ErrUnexpectedEOF", off, err)
		}
	}
	// Replaced by a larger file: within the window the old inode is read,
	// and a range past its end fails rather than reading the new file.
	if err := os.WriteFile(p+".new", content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	if got, err := read(5000, 100); err != nil || !bytes.Equal(got, content[5000:5100]) {
		t.Fatalf("replaced within the window, inside the old file: %v", err)
	}
	if _, err := read(11000, 100); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("replaced within the window, past the old file's end: %v, want io.ErrUnexpectedEOF (the old inode)", err)
	}
}
