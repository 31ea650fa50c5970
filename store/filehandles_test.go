package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func readRange(t *testing.T, s Store, key string, off, n int64) string {
	t.Helper()
	rc, err := s.NewRangeReader(context.Background(), key, off, n)
	if err != nil {
		t.Fatalf("NewRangeReader(%q): %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return string(b)
}

// TestFileHandleCache: ranged reads of a file store share one open handle
// per object, yet always read the object now at the key: a replaced object
// is read anew (a reader opened before keeps the old bytes), a deleted one
// is not found, handles beyond the bound are closed, and Close closes them
// all without breaking later reads.
func TestFileHandleCache(t *testing.T) {
	ctx := context.Background()
	f := newFile(t.TempDir())
	defer f.Close()
	if err := WriteAll(ctx, f, "a/x", []byte("0123456789"), nil); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if got := readRange(t, f, "a/x", int64(i%5), 3); got != "0123456789"[i%5:i%5+3] {
			t.Fatalf("read %d: %q", i, got)
		}
	}
	if n := f.handles.open(); n != 1 {
		t.Fatalf("%d handles open after reads of one object, want 1", n)
	}
	first := f.handles.byPath[filepath.Join(f.root, "a", "x")].Value.(*fileHandle)

	// A reader opened before the replacement reads the old inode; reads
	// after it read the new bytes (of another length).
	old, err := f.NewRangeReader(ctx, "a/x", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteAll(ctx, f, "a/x", []byte("abcdefghijklmnop"), nil); err != nil {
		t.Fatal(err)
	}
	if got := readRange(t, f, "a/x", 2, -1); got != "cdefghijklmnop" {
		t.Fatalf("after replace: %q", got)
	}
	b, err := io.ReadAll(old)
	if err != nil || string(b) != "0123456789" {
		t.Fatalf("reader opened before the replace: %q, %v", b, err)
	}
	// The replaced handle is closed once its last reader is.
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil { // a second Close is harmless
		t.Fatal(err)
	}
	if _, err := first.f.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("replaced handle still open: %v", err)
	}
	if got := readRange(t, f, "a/x", 0, 3); got != "abc" {
		t.Fatalf("after the old reader closed: %q", got)
	}

	// Deleted: not found, and its handle is dropped.
	if err := f.Delete(ctx, "a/x", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.NewRangeReader(ctx, "a/x", 0, 1); !errors.Is(err, ErrNotExist) {
		t.Fatalf("read after delete: %v", err)
	}
	if n := f.handles.open(); n != 0 {
		t.Fatalf("%d handles open after the delete, want 0", n)
	}

	// Bounded: the least recently used handles are closed.
	f.handles.max = 4
	var hs []*fileHandle
	for i := range 10 {
		key := fmt.Sprintf("b/%d", i)
		if err := WriteAll(ctx, f, key, []byte(key), nil); err != nil {
			t.Fatal(err)
		}
		if got := readRange(t, f, key, 0, -1); got != key {
			t.Fatalf("%s: %q", key, got)
		}
		hs = append(hs, f.handles.byPath[filepath.Join(f.root, "b", fmt.Sprint(i))].Value.(*fileHandle))
	}
	if n := f.handles.open(); n != 4 {
		t.Fatalf("%d handles open, want the bound 4", n)
	}
	for i, h := range hs {
		_, err := h.f.Stat()
		if closed := errors.Is(err, os.ErrClosed); closed != (i < 6) {
			t.Fatalf("handle %d closed=%v (%v)", i, closed, err)
		}
	}

	// Concurrent readers of a few objects (run with -race).
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				key := fmt.Sprintf("b/%d", (g+i)%10)
				rc, err := f.NewRangeReader(ctx, key, 0, -1)
				if err != nil {
					t.Error(err)
					return
				}
				b, err := io.ReadAll(rc)
				rc.Close()
				if err != nil || string(b) != key {
					t.Errorf("%s: %q, %v", key, b, err)
					return
				}
			}
		}()
	}
	wg.Wait()

	// Close closes every cached handle; reads still work, uncached.
	f.Close()
	if n := f.handles.open(); n != 0 {
		t.Fatalf("%d handles open after Close", n)
	}
	for _, h := range hs {
		if _, err := h.f.Stat(); !errors.Is(err, os.ErrClosed) {
			t.Fatalf("handle open after Close: %v", err)
		}
	}
	if got := readRange(t, f, "b/3", 0, -1); got != "b/3" {
		t.Fatalf("read after Close: %q", got)
	}
	if n := f.handles.open(); n != 0 {
		t.Fatalf("%d handles cached after Close", n)
	}
}

// TestFilePathIsJoin: the file store's path of a valid key is
// filepath.Join of its root and the key, for any root (it concatenates
// instead), and an invalid key has none.
func TestFilePathIsJoin(t *testing.T) {
	for _, root := range []string{"/", "/tmp/lake", "/tmp/lake/"} {
		f := newFile(root)
		for _, key := range []string{"a", "a/b/c.parquet", ".update.lock", "..a/b..", "date=2024-06-01/part-0.parquet"} {
			p, err := f.path("read", key)
			if want := filepath.Join(root, key); err != nil || p != want {
				t.Errorf("root %q, key %q: path %q, %v; want %q", root, key, p, err, want)
			}
		}
		for _, key := range []string{"", "/a", "a/", "a//b", "a/../b", "..", "a/."} {
			if p, err := f.path("read", key); err == nil {
				t.Errorf("root %q, invalid key %q: path %q", root, key, p)
			}
		}
	}
}

// TestReadRangesConcurrentWithStat: batches within the recheck window and
// reads that stat the path run at once on one cached handle (a lookup's
// batched data reads beside its metadata reads) and each reads the
// object's bytes; under -race, the window's size is read under the
// cache's lock, as the stats write it.
func TestReadRangesConcurrentWithStat(t *testing.T) {
	ctx := context.Background()
	f := newFile(t.TempDir())
	defer f.Close()
	if err := WriteAll(ctx, f, "x", []byte("0123456789"), nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if g%2 == 0 {
					buf := [][]byte{make([]byte, 4)}
					if _, err := ReadRanges(ctx, f, "x", []int64{3}, buf); err != nil || string(buf[0]) != "3456" {
						errs <- fmt.Errorf("batch: %q, %v", buf[0], err)
						return
					}
				} else if _, err := f.Stat(ctx, "x"); err != nil {
					errs <- err
					return
				} else {
					rc, err := f.NewRangeReader(ctx, "x", 1, 2)
					if err != nil {
						errs <- err
						return
					}
					b, err := io.ReadAll(rc)
					rc.Close()
					if err != nil || string(b) != "12" {
						errs <- fmt.Errorf("range reader: %q, %v", b, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
