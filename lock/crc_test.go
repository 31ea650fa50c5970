package lock

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/store"
)

// hadoopChecksum is the ".<name>.crc" side file Hadoop's local file system
// (Spark's, hence the Spark library's) writes beside a file: "crc\0", the
// bytes per checksum (512) as a big-endian int, then the CRC-32 of each
// 512-byte chunk.
func hadoopChecksum(data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("crc\x00")
	binary.Write(&b, binary.BigEndian, int32(512))
	for len(data) > 0 {
		n := min(512, len(data))
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(data[:n]))
		data = data[n:]
	}
	return b.Bytes()
}

// hadoopReadable reports whether Hadoop's local file system would read the
// file at path: no side file (read unverified) or a side file that matches
// its content (a stale one is a ChecksumException, which the library
// reports as a corrupt lock).
func hadoopReadable(t *testing.T, path string) bool {
	t.Helper()
	side, err := os.ReadFile(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".crc"))
	if os.IsNotExist(err) {
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(side, hadoopChecksum(data))
}

// TestLockHadoopChecksum: a lock file the Spark library left behind on a
// local store (with Hadoop's checksum side file) is healed, taken,
// refreshed and released by us; after every step the lock file stays
// readable by the library (no stale side file), and nothing of ours is
// left when we release it.
func TestLockHadoopChecksum(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	path := filepath.Join(dir, filepath.FromSlash(lockKey))
	side := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".crc")

	// The library's lock, stale (its holder died an hour ago), with the
	// side file Hadoop wrote for it.
	old := time.Now().Add(-time.Hour)
	theirs := LockInfo{CorrelationID: "spark", AcquiredAt: old, LastRefreshedAt: old, Owner: "spark-driver"}.Marshal()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, theirs, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(side, hadoopChecksum(theirs), 0o644); err != nil {
		t.Fatal(err)
	}
	if !hadoopReadable(t, path) {
		t.Fatal("the test's own side file does not match (hadoopChecksum is wrong)")
	}

	l := New(s, lockKey, "i", Config{Timeout: 1800 * time.Second, MaxWait: -1, HeartbeatInterval: -1})
	if err := l.Acquire(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	if got := readInfo(t, s).CorrelationID; got != "go" {
		t.Fatalf("holder %q after healing, want go", got)
	}
	if !hadoopReadable(t, path) {
		t.Fatal("after healing the library's stale lock, its checksum side file no longer matches our lock: the library would report it corrupt")
	}
	// A refresh rewrites the lock in place (compare-and-swap).
	before, _ := os.ReadFile(path)
	time.Sleep(1100 * time.Millisecond) // whole seconds: make the refresh change the content
	if err := os.WriteFile(side, hadoopChecksum(before), 0o644); err != nil {
		t.Fatal(err) // as if Hadoop had written the current version
	}
	if err := l.RefreshOrThrow(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); bytes.Equal(before, after) {
		t.Fatal("the refresh did not rewrite the lock")
	}
	if !hadoopReadable(t, path) {
		t.Fatal("a refresh left a stale checksum side file")
	}
	// Release deletes the lock (conditional delete): no side file stays to
	// shadow the next lock, whoever creates it.
	if err := os.WriteFile(side, hadoopChecksum(func() []byte { b, _ := os.ReadFile(path); return b }()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("lock still there after release: %v", err)
	}
	if _, err := os.Stat(side); !os.IsNotExist(err) {
		t.Fatalf("release left the checksum side file: %v", err)
	}
}
