package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// backend opens a fresh, empty store of one kind for a test.
type backend struct {
	name string
	open func(t *testing.T) store.Store
	// contentETag: the ETag is a hash of the content (S3), so rewriting
	// identical bytes keeps it.
	contentETag bool
}

// backends lists every backend the conformance suite runs against. More are
// added by other test files (S3) through extraBackends.
func backends() []backend {
	b := []backend{
		{"mem", func(t *testing.T) store.Store { return mustOpen(t, "mem://") }, false},
		{"file", func(t *testing.T) store.Store { return mustOpen(t, "file://"+t.TempDir()) }, false},
		{"file-sub", func(t *testing.T) store.Store { return store.Sub(mustOpen(t, t.TempDir()), "nested/root") }, false},
	}
	return append(b, extraBackends...)
}

var extraBackends []backend

func mustOpen(t *testing.T, url string) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("Open(%q): %v", url, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustWrite(t *testing.T, s store.Store, key, data string) {
	t.Helper()
	if err := store.WriteAll(context.Background(), s, key, []byte(data), nil); err != nil {
		t.Fatalf("WriteAll(%q): %v", key, err)
	}
}

func mustRead(t *testing.T, s store.Store, key string) string {
	t.Helper()
	b, err := store.ReadAll(context.Background(), s, key)
	if err != nil {
		t.Fatalf("ReadAll(%q): %v", key, err)
	}
	return string(b)
}

func listKeys(t *testing.T, s store.Store, opts store.ListOptions) []string {
	t.Helper()
	var keys []string
	for info, err := range s.List(context.Background(), opts) {
		if err != nil {
			t.Fatalf("List(%+v): %v", opts, err)
		}
		k := info.Key
		if info.IsDir {
			k += " (dir)"
		}
		keys = append(keys, k)
	}
	return keys
}

func TestConformance(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Run("ReadWriteStat", func(t *testing.T) { testReadWriteStat(t, b.open(t)) })
			t.Run("RangeRead", func(t *testing.T) { testRangeRead(t, b.open(t)) })
			t.Run("List", func(t *testing.T) { testList(t, b.open(t)) })
			t.Run("Delete", func(t *testing.T) { testDelete(t, b.open(t)) })
			t.Run("Conditional", func(t *testing.T) { testConditional(t, b.open(t), b.contentETag) })
			t.Run("IfNotExistRace", func(t *testing.T) { testIfNotExistRace(t, b.open(t)) })
			t.Run("IfMatchRace", func(t *testing.T) { testIfMatchRace(t, b.open(t)) })
			t.Run("HostileKeys", func(t *testing.T) { testHostileKeys(t, b.open(t)) })
			t.Run("Abort", func(t *testing.T) { testAbort(t, b.open(t)) })
			t.Run("Helpers", func(t *testing.T) { testHelpers(t, b.open(t)) })
		})
	}
}

func testReadWriteStat(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Stat(ctx, "a/b.txt"); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("Stat of missing object: got %v, want ErrNotExist", err)
	}
	if _, err := s.NewRangeReader(ctx, "a/b.txt", 0, -1); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("read of missing object: got %v, want ErrNotExist", err)
	}
	for _, data := range []string{"hello, world", "", "replaced"} {
		mustWrite(t, s, "a/b.txt", data)
		if got := mustRead(t, s, "a/b.txt"); got != data {
			t.Fatalf("read back %q, want %q", got, data)
		}
		info, err := s.Stat(ctx, "a/b.txt")
		if err != nil {
			t.Fatal(err)
		}
		if info.Key != "a/b.txt" || info.Size != int64(len(data)) || info.ETag == "" || info.IsDir || info.ModTime.IsZero() {
			t.Fatalf("Stat = %+v", info)
		}
	}
	// Below an object there is nothing.
	if _, err := s.Stat(ctx, "a/b.txt/c"); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("Stat below an object: got %v, want ErrNotExist", err)
	}
	if err := s.Delete(ctx, "a/b.txt/c", nil); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("Delete below an object: got %v, want ErrNotExist", err)
	}
	// A folder is not an object.
	if _, err := s.Stat(ctx, "a"); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("Stat of a folder: got %v, want ErrNotExist", err)
	}
	// Streaming write in several pieces, nothing visible before Close.
	w, err := s.NewWriter(ctx, "stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for i := range 100 {
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		if _, err := io.WriteString(w, line); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := store.Exists(ctx, s, "stream"); err != nil || ok {
		t.Fatalf("object visible before Close: %v %v", ok, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, s, "stream"); got != want.String() {
		t.Fatalf("streamed object differs: %d bytes, want %d", len(got), want.Len())
	}
}

func testRangeRead(t *testing.T, s store.Store) {
	ctx := context.Background()
	data := "0123456789abcdef"
	mustWrite(t, s, "r", data)
	for _, tc := range []struct {
		off, n int64
		want   string
	}{
		{0, -1, data},
		{0, 4, "0123"},
		{4, 4, "4567"},
		{10, -1, "abcdef"},
		{15, 1, "f"},
		{14, 10, "ef"}, // past the end: fewer bytes, no error
		{16, -1, ""},
		{16, 4, ""},
		{100, 4, ""},
		{3, 0, ""},
	} {
		r, err := s.NewRangeReader(ctx, "r", tc.off, tc.n)
		if err != nil {
			t.Fatalf("NewRangeReader(%d, %d): %v", tc.off, tc.n, err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || string(got) != tc.want {
			t.Errorf("range (%d, %d) = %q, %v; want %q", tc.off, tc.n, got, err, tc.want)
		}
	}
	if _, err := s.NewRangeReader(ctx, "r", -1, 1); err == nil {
		t.Error("negative offset: no error")
	}
}

func testList(t *testing.T, s store.Store) {
	keys := []string{"b", "a/x", "a/y/z", "a-b", "a/y0", "c/d/e/f", "a0", "_delta_log/0.json", ".update.lock"}
	for _, k := range keys {
		mustWrite(t, s, k, k)
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	for _, tc := range []struct {
		opts store.ListOptions
		want []string
	}{
		{store.ListOptions{}, sorted},
		{store.ListOptions{Prefix: "a/"}, []string{"a/x", "a/y/z", "a/y0"}},
		{store.ListOptions{Prefix: "a"}, []string{"a-b", "a/x", "a/y/z", "a/y0", "a0"}},
		{store.ListOptions{Prefix: "a/y"}, []string{"a/y/z", "a/y0"}},
		{store.ListOptions{Prefix: "zz"}, nil},
		{store.ListOptions{Prefix: "nope/"}, nil},
		{store.ListOptions{Delimiter: "/"}, []string{".update.lock", "_delta_log/ (dir)", "a-b", "a/ (dir)", "a0", "b", "c/ (dir)"}},
		{store.ListOptions{Prefix: "a/", Delimiter: "/"}, []string{"a/x", "a/y/ (dir)", "a/y0"}},
		{store.ListOptions{Prefix: "a", Delimiter: "/"}, []string{"a-b", "a/ (dir)", "a0"}},
		{store.ListOptions{Prefix: "c/", Delimiter: "/"}, []string{"c/d/ (dir)"}},
	} {
		if got := listKeys(t, s, tc.opts); !slices.Equal(got, tc.want) {
			t.Errorf("List(%+v) = %q, want %q", tc.opts, got, tc.want)
		}
	}
	// Listed objects carry size and the same ETag as Stat.
	for info, err := range s.List(context.Background(), store.ListOptions{Prefix: "a/x"}) {
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Stat(context.Background(), info.Key)
		if err != nil {
			t.Fatal(err)
		}
		if info.Size != 3 || info.ETag != st.ETag {
			t.Errorf("listed %+v, stat %+v", info, st)
		}
	}
	// Stopping early is allowed.
	n := 0
	for range s.List(context.Background(), store.ListOptions{}) {
		n++
		if n == 2 {
			break
		}
	}
}

func testDelete(t *testing.T, s store.Store) {
	ctx := context.Background()
	if err := s.Delete(ctx, "t/x", nil); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("delete missing: %v", err)
	}
	mustWrite(t, s, "t/deep/x", "1")
	mustWrite(t, s, "t/y", "2")
	if err := s.Delete(ctx, "t/deep/x", nil); err != nil {
		t.Fatal(err)
	}
	if ok, _ := store.Exists(ctx, s, "t/deep/x"); ok {
		t.Fatal("deleted object still exists")
	}
	if got := listKeys(t, s, store.ListOptions{Prefix: "t/", Delimiter: "/"}); !slices.Equal(got, []string{"t/y"}) {
		t.Fatalf("after delete, List = %q (the emptied folder must vanish)", got)
	}
	if err := s.Delete(ctx, "t/y", nil); err != nil {
		t.Fatal(err)
	}
	if got := listKeys(t, s, store.ListOptions{Delimiter: "/"}); len(got) != 0 {
		t.Fatalf("after deleting everything, List = %q", got)
	}
	// Writing into a folder that was removed recreates it.
	mustWrite(t, s, "t/deep/x", "3")
	if got := mustRead(t, s, "t/deep/x"); got != "3" {
		t.Fatal(got)
	}
}

func testConditional(t *testing.T, s store.Store, contentETag bool) {
	ctx := context.Background()
	ifNotExist := &store.WriteOptions{IfNotExist: true}
	if err := store.WriteAll(ctx, s, "c", []byte("v1"), ifNotExist); err != nil {
		t.Fatalf("IfNotExist on a new key: %v", err)
	}
	if err := store.WriteAll(ctx, s, "c", []byte("v2"), ifNotExist); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("IfNotExist on an existing key: %v, want ErrPrecondition", err)
	}
	if got := mustRead(t, s, "c"); got != "v1" {
		t.Fatalf("failed IfNotExist changed the object: %q", got)
	}
	v1, err := s.Stat(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.WriteAll(ctx, s, "c", []byte("v2"), &store.WriteOptions{IfMatch: v1.ETag}); err != nil {
		t.Fatalf("IfMatch with the current ETag: %v", err)
	}
	v2, _ := s.Stat(ctx, "c")
	if v2.ETag == v1.ETag {
		t.Fatal("replacement kept its ETag")
	}
	// Same bytes and size again: the ETag must still change.
	if err := store.WriteAll(ctx, s, "c", []byte("v2"), &store.WriteOptions{IfMatch: v2.ETag}); err != nil {
		t.Fatal(err)
	}
	v3, _ := s.Stat(ctx, "c")
	if v3.ETag == v2.ETag && !contentETag {
		t.Fatal("rewrite with identical bytes kept its ETag")
	}
	if err := store.WriteAll(ctx, s, "c", []byte("v4"), &store.WriteOptions{IfMatch: v1.ETag}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("IfMatch with a stale ETag: %v, want ErrPrecondition", err)
	}
	if err := store.WriteAll(ctx, s, "missing", []byte("x"), &store.WriteOptions{IfMatch: v1.ETag}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("IfMatch on a missing key: %v, want ErrPrecondition", err)
	}
	if ok, _ := store.Exists(ctx, s, "missing"); ok {
		t.Fatal("failed IfMatch created the object")
	}
	if err := store.WriteAll(ctx, s, "x", nil, &store.WriteOptions{IfMatch: "a", IfNotExist: true}); err == nil {
		t.Fatal("IfMatch with IfNotExist: no error")
	}
	// Conditional delete.
	if err := s.Delete(ctx, "c", &store.DeleteOptions{IfMatch: v1.ETag}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("delete with a stale ETag: %v, want ErrPrecondition", err)
	}
	if got := mustRead(t, s, "c"); got != "v2" {
		t.Fatalf("failed conditional delete changed the object: %q", got)
	}
	if err := s.Delete(ctx, "c", &store.DeleteOptions{IfMatch: v3.ETag}); err != nil {
		t.Fatalf("delete with the current ETag: %v", err)
	}
	if err := s.Delete(ctx, "c", &store.DeleteOptions{IfMatch: v3.ETag}); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("conditional delete of a missing object: %v, want ErrNotExist", err)
	}
}

// racers is how many goroutines race in the concurrency tests: 4× the 2
// cores of the target machine, so that they really interleave.
const racers = 8

func testIfNotExistRace(t *testing.T, s store.Store) {
	ctx := context.Background()
	for round := range 5 {
		key := fmt.Sprintf("_delta_log/%020d.json", round)
		var wg sync.WaitGroup
		errs := make([]error, racers)
		start := make(chan struct{})
		for i := range racers {
			wg.Go(func() {
				<-start
				errs[i] = store.WriteAll(ctx, s, key, []byte(fmt.Sprintf("writer %d", i)), &store.WriteOptions{IfNotExist: true})
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, winner, i)
				}
				winner = i
			case !errors.Is(err, store.ErrPrecondition):
				t.Fatalf("round %d: writer %d: %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody won", round)
		}
		if got, want := mustRead(t, s, key), fmt.Sprintf("writer %d", winner); got != want {
			t.Fatalf("round %d: object is %q, winner wrote %q", round, got, want)
		}
	}
}

// testIfMatchRace has racers goroutines each add 1 to a counter object
// increments times with read-modify-CAS loops; no increment may be lost.
func testIfMatchRace(t *testing.T, s store.Store) {
	ctx := context.Background()
	const increments = 10
	mustWrite(t, s, "counter", "0")
	var wg sync.WaitGroup
	errs := make(chan error, racers)
	for range racers {
		wg.Go(func() {
			for range increments {
				if err := casIncrement(ctx, s, "counter"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, want := mustRead(t, s, "counter"), fmt.Sprint(racers*increments); got != want {
		t.Fatalf("counter = %s, want %s (lost increments)", got, want)
	}
}

// casIncrement adds one to the decimal counter at key, retrying on
// ErrPrecondition.
func casIncrement(ctx context.Context, s store.Store, key string) error {
	for {
		info, err := s.Stat(ctx, key)
		if err != nil {
			return err
		}
		// Read the version we stat'ed: read, then check the ETag again so the
		// value and ETag belong together.
		data, err := store.ReadAll(ctx, s, key)
		if err != nil {
			return err
		}
		again, err := s.Stat(ctx, key)
		if err != nil {
			return err
		}
		if again.ETag != info.ETag {
			continue
		}
		var n int
		if _, err := fmt.Sscan(string(data), &n); err != nil {
			return fmt.Errorf("counter %q: %w", data, err)
		}
		err = store.WriteAll(ctx, s, key, []byte(fmt.Sprint(n+1)), &store.WriteOptions{IfMatch: info.ETag})
		if errors.Is(err, store.ErrPrecondition) {
			continue
		}
		return err
	}
}

func testHostileKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, key := range []string{
		"", "/etc/passwd", "..", "../x", "a/../../x", "a/./b", ".", "a//b", "a/", "a\\..\\b",
		"a\x00b", "\xff", strings.Repeat("k", store.MaxKeyLen+1),
	} {
		if _, err := s.Stat(ctx, key); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Stat(%q): %v, want ErrInvalidKey", key, err)
		}
		if _, err := s.NewWriter(ctx, key, nil); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("NewWriter(%q): %v, want ErrInvalidKey", key, err)
		}
		if _, err := s.NewRangeReader(ctx, key, 0, -1); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("NewRangeReader(%q): %v, want ErrInvalidKey", key, err)
		}
		if err := s.Delete(ctx, key, nil); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Delete(%q): %v, want ErrInvalidKey", key, err)
		}
	}
	for _, prefix := range []string{"../", "/", "a/../"} {
		for _, err := range s.List(ctx, store.ListOptions{Prefix: prefix}) {
			if !errors.Is(err, store.ErrInvalidKey) {
				t.Errorf("List(%q): %v, want ErrInvalidKey", prefix, err)
			}
		}
	}
	// Odd but valid names work and stay inside the store.
	for _, key := range []string{"..a", "a..", "a b/c%20d", "ü/€", "a:b", "...", "-x"} {
		mustWrite(t, s, key, key)
		if got := mustRead(t, s, key); got != key {
			t.Errorf("%q read back %q", key, got)
		}
	}
	if got, want := len(listKeys(t, s, store.ListOptions{})), 7; got != want {
		t.Errorf("List found %d objects, want %d", got, want)
	}
}

func testAbort(t *testing.T, s store.Store) {
	ctx := context.Background()
	mustWrite(t, s, "keep", "old")
	w, err := s.NewWriter(ctx, "keep", nil)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "new")
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	w, err = s.NewWriter(ctx, "gone/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "never")
	w.Abort()
	if got := mustRead(t, s, "keep"); got != "old" {
		t.Fatalf("aborted write changed the object: %q", got)
	}
	if got := listKeys(t, s, store.ListOptions{}); !slices.Equal(got, []string{"keep"}) {
		t.Fatalf("after aborts, List = %q", got)
	}
	// A cancelled context commits nothing.
	cctx, cancel := context.WithCancel(ctx)
	w, err = s.NewWriter(cctx, "cancelled", nil)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "x")
	cancel()
	if err := w.Close(); err == nil {
		t.Fatal("Close after cancel: no error")
	}
	if ok, _ := store.Exists(ctx, s, "cancelled"); ok {
		t.Fatal("cancelled write committed")
	}
}

func testHelpers(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, k := range []string{"t/a", "t/b/c", "t/b/d", "u/a", "t0"} {
		mustWrite(t, s, k, "x")
	}
	n, err := store.DeleteAll(ctx, s, "t/")
	if err != nil || n != 3 {
		t.Fatalf("DeleteAll(t/) = %d, %v; want 3", n, err)
	}
	if got := listKeys(t, s, store.ListOptions{}); !slices.Equal(got, []string{"t0", "u/a"}) {
		t.Fatalf("after DeleteAll, List = %q", got)
	}
	data := []byte("0123456789")
	if err := store.WriteAll(ctx, s, "ra", data, nil); err != nil {
		t.Fatal(err)
	}
	ra := store.NewReaderAt(ctx, s, "ra", int64(len(data)))
	for _, tc := range []struct {
		off     int64
		n       int
		want    string
		wantErr error
	}{
		{0, 4, "0123", nil},
		{6, 4, "6789", nil},
		{8, 4, "89", io.EOF},
		{10, 1, "", io.EOF},
		{3, 0, "", nil},
	} {
		p := make([]byte, tc.n)
		n, err := ra.ReadAt(p, tc.off)
		if string(p[:n]) != tc.want || err != tc.wantErr {
			t.Errorf("ReadAt(%d, %d) = %q, %v; want %q, %v", tc.n, tc.off, p[:n], err, tc.want, tc.wantErr)
		}
	}
	// A size larger than the object is detected.
	p := make([]byte, 4)
	if _, err := store.NewReaderAt(ctx, s, "ra", 12).ReadAt(p, 8); err != io.ErrUnexpectedEOF {
		t.Errorf("ReadAt past a short object: %v, want io.ErrUnexpectedEOF", err)
	}
}
