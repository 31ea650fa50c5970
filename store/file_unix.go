//go:build unix

package store

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// fileETag derives an ETag from the inode number, size and mtime in
// nanoseconds; see fileStore.
func fileETag(fi fs.FileInfo) string {
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = uint64(st.Ino)
	}
	return fmt.Sprintf("%x-%x-%x", ino, fi.Size(), fi.ModTime().UnixNano())
}

// replaceFile renames tmp over path (fileWriter.commit).
func replaceFile(tmp, path string) error { return os.Rename(tmp, path) }

// openShared opens path for reading. On unix an open file never stops
// another process from renaming over or unlinking its path.
func openShared(path string) (*os.File, error) { return os.Open(path) }

// lockInode takes an exclusive flock(2) on fh's inode (withLocked).
func (f *fileStore) lockInode(fh *os.File) (unlock func(), err error) {
	fd := int(fh.Fd())
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return func() { syscall.Flock(fd, syscall.LOCK_UN) }, nil
}
