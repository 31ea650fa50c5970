package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// maxLockRetries bounds how often withLocked starts over because the object
// was replaced between open and lock. Each retry means another writer
// committed in that window; the loop makes progress as long as writers do.
const maxLockRetries = 1000

// withLocked runs fn while holding an exclusive lock on the inode that path
// names (lockInode: flock(2) on unix, LockFileEx on Windows), with cur
// describing that inode as fn sees it (nil if no file is at path). fn runs
// only when path still names the locked inode, so whatever fn does to path
// (rename over it, unlink it) is atomic with its checks with respect to
// every other withLocked caller in any process.
func (f *fileStore) withLocked(path string, fn func(cur fs.FileInfo) error) error {
	for range maxLockRetries {
		fh, err := openShared(path)
		if errors.Is(err, fs.ErrNotExist) {
			return fn(nil)
		}
		if err != nil {
			return err
		}
		retry, err := f.lockedCall(fh, path, fn)
		if !retry {
			return err
		}
	}
	return fmt.Errorf("%s: replaced concurrently %d times in a row", path, maxLockRetries)
}

func (f *fileStore) lockedCall(fh *os.File, path string, fn func(cur fs.FileInfo) error) (retry bool, err error) {
	defer fh.Close() // closing the last descriptor also releases the lock
	unlock, err := f.lockInode(fh)
	if err != nil {
		return false, err
	}
	defer unlock()
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
	if !os.SameFile(locked, now) {
		return true, nil // replaced while we waited: lock the new inode
	}
	return false, fn(locked)
}
