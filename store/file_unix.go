//go:build unix

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

var errNotDirSyscall error = syscall.ENOTDIR

// fileETag derives an ETag from the inode number, size and mtime in
// nanoseconds; see fileStore.
func fileETag(fi fs.FileInfo) string {
	var ino uint64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = uint64(st.Ino)
	}
	return fmt.Sprintf("%x-%x-%x", ino, fi.Size(), fi.ModTime().UnixNano())
}

func sameInode(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Ino == sb.Ino && sa.Dev == sb.Dev
}

// maxLockRetries bounds how often withLocked starts over because the object
// was replaced between open and flock. Each retry means another writer
// committed in that window; the loop makes progress as long as writers do.
const maxLockRetries = 1000

// withLocked runs fn while holding an exclusive flock(2) on the inode that
// path names, with cur describing that inode as fn sees it (nil if no file
// is at path). fn runs only when path still names the locked inode, so
// whatever fn does to path (rename over it, unlink it) is atomic with its
// checks with respect to every other withLocked caller in any process.
func (f *fileStore) withLocked(path string, fn func(cur fs.FileInfo) error) error {
	for range maxLockRetries {
		fh, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fn(nil)
		}
		if err != nil {
			return err
		}
		retry, err := lockedCall(fh, path, fn)
		if !retry {
			return err
		}
	}
	return fmt.Errorf("%s: replaced concurrently %d times in a row", path, maxLockRetries)
}

func lockedCall(fh *os.File, path string, fn func(cur fs.FileInfo) error) (retry bool, err error) {
	defer fh.Close() // closing the last descriptor also releases the lock
	fd := int(fh.Fd())
	for {
		err = syscall.Flock(fd, syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return false, err
	}
	defer syscall.Flock(fd, syscall.LOCK_UN)
	locked, err := fh.Stat()
	if err != nil {
		return false, err
	}
	now, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil // unlinked while we waited: start over
	}
	if err != nil {
		return false, err
	}
	if !sameInode(locked, now) {
		return true, nil // replaced while we waited: lock the new inode
	}
	return false, fn(locked)
}
