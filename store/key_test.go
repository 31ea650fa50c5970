package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

func TestValidKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"a", true},
		{"a/b/c.parquet", true},
		{"_delta_log/00000000000000000000.json", true},
		{".update.lock", true},
		{"filelists/[ariadne_index] name/x", true},
		{"..a/b..", true},
		{"", false},
		{"/a", false},
		{"a/", false},
		{"a//b", false},
		{".", false},
		{"..", false},
		{"a/./b", false},
		{"a/../b", false},
		{"a/..", false},
		{`a\b`, false},
		{"a\x00", false},
		{"\xc3\x28", false},
		{strings.Repeat("a", store.MaxKeyLen), true},
		{strings.Repeat("a", store.MaxKeyLen+1), false},
	} {
		err := store.ValidKey(tc.key)
		if (err == nil) != tc.ok {
			t.Errorf("ValidKey(%q) = %v, want ok=%v", tc.key, err, tc.ok)
		}
		var ke *store.KeyError
		if err != nil && (!errors.Is(err, store.ErrInvalidKey) || !errors.As(err, &ke) || ke.Key != tc.key) {
			t.Errorf("ValidKey(%q) = %#v: not a *KeyError matching ErrInvalidKey", tc.key, err)
		}
	}
}

func TestJoinKey(t *testing.T) {
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"a", "b"}, "a/b"},
		{[]string{"a/", "/b/", "c"}, "a/b/c"},
		{[]string{"", "a", ""}, "a"},
		{nil, ""},
		{[]string{"a", "../b"}, "a/../b"}, // not cleaned: ValidKey rejects it
	} {
		if got := store.JoinKey(tc.parts...); got != tc.want {
			t.Errorf("JoinKey(%q) = %q, want %q", tc.parts, got, tc.want)
		}
	}
}

func TestOpenURLs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		url, want string
	}{
		{"file://" + dir + "/x", "file://" + dir + "/x"},
		{dir + "/x/", "file://" + dir + "/x"},
		{"rel/dir", "file://" + dir + "/rel/dir"},
		{"mem://", "mem://"},
	} {
		s, err := store.Open(ctx, tc.url)
		if err != nil {
			t.Errorf("Open(%q): %v", tc.url, err)
			continue
		}
		if got := s.URL(); got != tc.want {
			t.Errorf("Open(%q).URL() = %q, want %q", tc.url, got, tc.want)
		}
		s.Close()
	}
	for _, bad := range []string{"file://host/x", "file://rel", "mem://name", "ftp://x/y", "s3://b/../x"} {
		if s, err := store.Open(ctx, bad); err == nil {
			t.Errorf("Open(%q) = %s, want an error", bad, s.URL())
		}
	}
	// Two Opens of mem:// are independent.
	a, b := mustOpen(t, "mem://"), mustOpen(t, "mem://")
	mustWrite(t, a, "k", "v")
	if ok, _ := store.Exists(ctx, b, "k"); ok {
		t.Error("mem:// stores share objects")
	}
}

// TestFileLayout checks what the file backend leaves on disk: plain files at
// the keys' paths, no sidecars, no temporary files, no empty folders.
func TestFileLayout(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s := mustOpen(t, root)
	mustWrite(t, s, "t/_delta_log/00000000000000000000.json", "{}")
	mustWrite(t, s, "t/part-0.parquet", "PAR1")
	if err := store.WriteAll(ctx, s, "t/part-0.parquet", []byte("PAR1PAR1"), &store.WriteOptions{IfNotExist: true}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatal(err)
	}
	w, _ := s.NewWriter(ctx, "t/aborted", nil)
	w.Write([]byte("x"))
	w.Abort()
	var files []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if want := "t/_delta_log/00000000000000000000.json t/part-0.parquet"; strings.Join(files, " ") != want {
		t.Fatalf("files on disk: %q, want %q", files, want)
	}
	// A key segment with the reserved temporary prefix is refused.
	if _, err := s.NewWriter(ctx, "t/.ariadne-tmp-x", nil); !errors.Is(err, store.ErrInvalidKey) {
		t.Fatalf("reserved name: %v", err)
	}
	// Stray temporary files (a crashed writer's) are not listed.
	os.WriteFile(filepath.Join(root, "t", ".ariadne-tmp-stale"), []byte("x"), 0o666)
	if got := listKeys(t, s, store.ListOptions{Prefix: "t/"}); len(got) != 2 {
		t.Fatalf("List = %q", got)
	}
	n, err := store.DeleteAll(ctx, s, "t/")
	if err != nil || n != 2 {
		t.Fatalf("DeleteAll = %d, %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(root, "t", "_delta_log")); !os.IsNotExist(err) {
		t.Fatalf("emptied folder t/_delta_log survives: %v", err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Fatalf("root was removed: %v", err)
	}
	// A folder holding only a stray temporary file is not a prefix.
	if got := listKeys(t, s, store.ListOptions{Delimiter: "/"}); len(got) != 0 {
		t.Fatalf("List = %q", got)
	}
}

func TestSub(t *testing.T) {
	ctx := context.Background()
	base := mustOpen(t, "mem://")
	sub := store.Sub(store.Sub(base, "a/"), "b")
	if got, want := sub.URL(), "mem:///a/b"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	mustWrite(t, sub, "x/y", "1")
	mustWrite(t, base, "a/bb", "2")
	if got := mustRead(t, base, "a/b/x/y"); got != "1" {
		t.Fatal(got)
	}
	if got := listKeys(t, sub, store.ListOptions{}); strings.Join(got, ",") != "x/y" {
		t.Errorf("List = %q", got)
	}
	if info, err := sub.Stat(ctx, "x/y"); err != nil || info.Key != "x/y" {
		t.Errorf("Stat = %+v, %v", info, err)
	}
	for _, tc := range []struct{ url, want string }{
		{"s3://bkt?region=x", "s3://bkt/p?region=x"},
		{"file:///data", "file:///data/p"},
	} {
		if got := store.Sub(urlStore{url: tc.url}, "p").URL(); got != tc.want {
			t.Errorf("Sub(%q).URL() = %q, want %q", tc.url, got, tc.want)
		}
	}
}

// urlStore is a Store whose URL is given; Sub only needs URL.
type urlStore struct {
	store.Store
	url string
}

func (u urlStore) URL() string { return u.url }
