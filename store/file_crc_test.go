package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestFileDropsHadoopChecksum: a file that Spark wrote on the local file
// system has a ".<name>.crc" side file; once we overwrite or delete the
// file, the side file must go, or Hadoop's local file system rejects the
// new content (seen with the Spark library 0.1.8-beta reading a
// metadata.json our update rewrote: MetadataMissingOrCorruptException).
// Side files of other objects stay.
func TestFileDropsHadoopChecksum(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func(key, body string, opts *WriteOptions) {
		t.Helper()
		w, err := s.NewWriter(ctx, key, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	crc := func(name string) string { return filepath.Join(dir, "indexes", "i", "."+name+".crc") }
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	put("indexes/i/metadata.json", "{}", nil)
	put("indexes/i/other.json", "{}", nil)
	for _, n := range []string{"metadata.json", "other.json", "lock"} {
		if err := os.WriteFile(crc(n), []byte("crc"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("indexes/i/metadata.json", `{"a":1}`, nil)
	if exists(crc("metadata.json")) {
		t.Error("overwrite kept the stale checksum side file")
	}
	if !exists(crc("other.json")) {
		t.Error("a write removed another object's side file")
	}
	if err := s.Delete(ctx, "indexes/i/other.json", nil); err != nil {
		t.Fatal(err)
	}
	if exists(crc("other.json")) {
		t.Error("delete kept the checksum side file")
	}
	put("indexes/i/lock", "x", &WriteOptions{IfNotExist: true})
	if exists(crc("lock")) {
		t.Error("create-if-absent kept a stale checksum side file")
	}
	if !exists(filepath.Join(dir, "indexes", "i", "metadata.json")) {
		t.Error("metadata.json is gone")
	}
}
