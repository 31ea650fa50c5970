package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

func TestCounting(t *testing.T) {
	ctx := context.Background()
	c := store.NewCounting(mustOpen(t, "file://"+t.TempDir()))
	mustWrite(t, c, "a", "hello")                                                        // 1 write, 5 bytes
	mustWrite(t, c, "b/c", "world!")                                                     // 1 write, 6 bytes
	_ = store.WriteAll(ctx, c, "a", []byte("xx"), &store.WriteOptions{IfNotExist: true}) // failed commit: request, no bytes
	w, _ := c.NewWriter(ctx, "aborted", nil)
	w.Write([]byte("zzz"))
	w.Abort()                                  // nothing
	mustRead(t, c, "a")                        // 1 read, 5 bytes
	r, _ := c.NewRangeReader(ctx, "b/c", 1, 3) // 1 read, 2 of 3 bytes consumed
	io.ReadFull(r, make([]byte, 2))
	r.Close()
	c.NewRangeReader(ctx, "missing", 0, -1)                        // 1 read, failed
	store.Exists(ctx, c, "a")                                      // 1 stat
	store.NewReaderAt(ctx, c, "b/c", 6).ReadAt(make([]byte, 4), 2) // 1 read, 4 bytes
	listKeys(t, c, store.ListOptions{})                            // 1 list
	c.Delete(ctx, "a", nil)                                        // 1 delete
	want := store.Stats{
		Stat:   store.OpStats{Requests: 1},
		Read:   store.OpStats{Requests: 4, Bytes: 5 + 2 + 4},
		Write:  store.OpStats{Requests: 3, Bytes: 11},
		Delete: store.OpStats{Requests: 1},
		List:   store.OpStats{Requests: 1},
		Total:  store.OpStats{Requests: 10, Bytes: 22},
	}
	got := c.Snapshot()
	if got != want {
		t.Fatalf("Snapshot = %+v\nwant       %+v", got, want)
	}
	if d := c.Snapshot().Sub(got); d != (store.Stats{}) {
		t.Fatalf("Sub of equal snapshots = %+v", d)
	}
	c.Reset()
	if got := c.Snapshot(); got != (store.Stats{}) {
		t.Fatalf("after Reset: %+v", got)
	}
	// Concurrent requests are all counted.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				c.Stat(ctx, "b/c")
			}
		})
	}
	wg.Wait()
	if got := c.Snapshot().Op(store.OpStat).Requests; got != 800 {
		t.Fatalf("concurrent stats counted %d, want 800", got)
	}
}

func TestFaultyRules(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	inner := mustOpen(t, "mem://")
	f := store.NewFaulty(inner, store.Faults{Errors: []store.FaultRule{
		{Op: store.OpWrite, Key: func(k string) bool { return strings.HasPrefix(k, "log/") }, Nth: 2, Err: boom},
		{Op: store.OpRead, Nth: 0, Key: func(k string) bool { return k == "bad" }, Err: boom},
		{Op: store.OpList, Nth: 1, Err: boom},
	}})
	for i := range 3 {
		err := store.WriteAll(ctx, f, fmt.Sprintf("log/%d", i), []byte("x"), nil)
		if (err != nil) != (i == 1) || (err != nil && !errors.Is(err, boom)) {
			t.Errorf("write %d: %v", i, err)
		}
	}
	if ok, _ := store.Exists(ctx, inner, "log/1"); ok {
		t.Error("failed write reached the store")
	}
	mustWrite(t, f, "bad", "x")
	for range 2 {
		if _, err := store.ReadAll(ctx, f, "bad"); !errors.Is(err, boom) {
			t.Errorf("read bad: %v", err)
		}
	}
	if got := mustRead(t, f, "log/0"); got != "x" {
		t.Error(got)
	}
	var errs []error
	for range 2 {
		for _, err := range f.List(ctx, store.ListOptions{}) {
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) != 1 || !errors.Is(errs[0], boom) {
		t.Errorf("list errors: %v", errs)
	}
}

func TestFaultyShortReads(t *testing.T) {
	f := store.NewFaulty(mustOpen(t, "mem://"), store.Faults{ShortReads: 3})
	mustWrite(t, f, "k", "0123456789")
	r, err := f.NewRangeReader(context.Background(), "k", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n, _ := r.Read(make([]byte, 8)); n != 3 {
		t.Fatalf("Read returned %d bytes, want at most 3", n)
	}
	// The helpers loop, so they still read everything.
	p := make([]byte, 8)
	if n, err := store.NewReaderAt(context.Background(), f, "k", 10).ReadAt(p, 1); n != 8 || err != nil || string(p) != "12345678" {
		t.Fatalf("ReadAt = %d %v %q", n, err, p)
	}
}

func TestFaultyCrash(t *testing.T) {
	ctx := context.Background()
	const k = 5
	inner := mustOpen(t, "file://"+t.TempDir())
	f := store.NewFaulty(inner, store.Faults{CrashAfterWrites: k})
	mustWrite(t, inner, "pre", "x")
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, crashed := 0, 0
	for i := range 4 * k {
		wg.Go(func() {
			err := store.WriteAll(ctx, f, fmt.Sprintf("w/%02d", i), []byte("x"), nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, store.ErrCrashed):
				crashed++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ok != k || crashed != 3*k || !f.Crashed() || f.Commits() != k {
		t.Fatalf("ok=%d crashed=%d Crashed()=%v Commits()=%d; want %d, %d", ok, crashed, f.Crashed(), f.Commits(), k, 3*k)
	}
	if got := len(listKeys(t, inner, store.ListOptions{Prefix: "w/"})); got != k {
		t.Fatalf("%d objects reached storage, want %d", got, k)
	}
	if err := f.Delete(ctx, "pre", nil); !errors.Is(err, store.ErrCrashed) {
		t.Fatalf("delete after crash: %v", err)
	}
	if got := mustRead(t, f, "pre"); got != "x" {
		t.Fatal("reads must keep working after the crash")
	}
}

func TestFaultyLatencyCancel(t *testing.T) {
	f := store.NewFaulty(mustOpen(t, "mem://"), store.Faults{Latency: 1 << 62})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Stat(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stat with latency and a cancelled context: %v", err)
	}
}

func TestCanonical(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct{ in, want string }{
		{"/data/x.csv", "file:///data/x.csv"},
		{"/data/./y/../x.csv", "file:///data/x.csv"},
		{"rel/x.csv", "file://" + dir + "/rel/x.csv"},
		{"/data/a b.csv", "file:///data/a%20b.csv"},
		{"file:/data/x.csv", "file:///data/x.csv"},
		{"file:///data/x.csv", "file:///data/x.csv"},
		{"file://localhost/data/x.csv", "file:///data/x.csv"},
		{"file:///data/a%20b.csv", "file:///data/a%20b.csv"},
		{"s3://bkt/t/part-0.parquet", "s3://bkt/t/part-0.parquet"},
		{"S3A://bkt/t/a b", "s3a://bkt/t/a%20b"},
		{"gs://bkt/k", "gs://bkt/k"},
		{"azblob://ctr/k", "azblob://ctr/k"},
	} {
		got, err := store.Canonical(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Canonical(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"s3://bkt/../x", "s3://bkt", "s3:///k", "s3://bkt/k?x=1", "http://h/k", "file://host/x", "file:rel"} {
		if got, err := store.Canonical(bad); err == nil {
			t.Errorf("Canonical(%q) = %q, want an error", bad, got)
		}
	}
}

func TestResolver(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var opened []*store.Counting
	r := store.NewResolver(store.ResolverOptions{Wrap: func(s store.Store) store.Store {
		c := store.NewCounting(s)
		opened = append(opened, c)
		return c
	}})
	defer r.Close()
	mustWrite(t, mustOpen(t, dir), "t/x.csv", "a,b")
	for _, uri := range []string{dir + "/t/x.csv", "file://" + dir + "/t/x.csv", "file:" + dir + "/t/./x.csv"} {
		s, key, err := r.Resolve(ctx, uri)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", uri, err)
		}
		if want := strings.TrimPrefix(dir, "/") + "/t/x.csv"; key != want {
			t.Fatalf("Resolve(%q) key = %q, want %q", uri, key, want)
		}
		if got := mustRead(t, s, key); got != "a,b" {
			t.Fatal(got)
		}
	}
	if len(opened) != 1 {
		t.Fatalf("opened %d stores for one root, want 1", len(opened))
	}
	// A registered store serves its root, longest root first.
	mem, deeper := mustOpen(t, "mem://"), mustOpen(t, "mem://")
	if err := r.Register("s3://bkt", mem); err != nil {
		t.Fatal(err)
	}
	if err := r.Register("s3://bkt/deep/", deeper); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		uri  string
		s    store.Store
		want string
	}{
		{"s3://bkt/a/b", mem, "a/b"},
		{"s3://bkt/deep/a%20b", deeper, "a b"},
		{"s3://bkt/deeper", mem, "deeper"},
	} {
		s, key, err := r.Resolve(ctx, tc.uri)
		if err != nil || s != tc.s || key != tc.want {
			t.Errorf("Resolve(%q) = %v, %q, %v; want key %q", tc.uri, s.URL(), key, err, tc.want)
		}
	}
	if _, _, err := r.Resolve(ctx, "s3://bkt/../x"); err == nil {
		t.Error("hostile URI resolved")
	}
}
