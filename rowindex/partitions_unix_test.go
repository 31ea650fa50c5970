//go:build unix

package rowindex

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPartitionedBuildFewFiles: the partitioned path holds one partition
// file whatever the partitions, so a build of 64 partitions runs under a
// `ulimit -n` a few descriptors above what the process holds (one file a
// partition would fail with "too many open files").
func TestPartitionedBuildFewFiles(t *testing.T) {
	dir := t.TempDir()
	lake, uris, _ := testLake(t, dir, false)
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	low := old
	low.Cur = uint64(len(fds) + 24)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	for _, kind := range []Kind{KindHash, KindSorted} {
		_, _, st := buildIn(t, filepath.Join(dir, "ix-fds", string(kind)), Definition{Name: "r", Key: "user_id", Kind: kind}, lake, uris, WithMemory(400_000))
		if !st.KeyIDs || st.Partitions < 64 {
			t.Fatalf("%s: key ids %v, %d partitions; want the partitioned path, 64 partitions", kind, st.KeyIDs, st.Partitions)
		}
	}
}
