package store

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"
)

// fileETag derives an ETag from the size and mtime in nanoseconds: a
// FileInfo from a path carries no file index to add. Every commit sets its
// file's mtime to the time of the commit in nanoseconds
// (fileWriter.Close), so a replacement still gets a new ETag unless two
// commits of the same size happen within the clock's 100 ns, which the
// fsync of each commit rules out in practice.
func fileETag(fi fs.FileInfo) string {
	return fmt.Sprintf("0-%x-%x", fi.Size(), fi.ModTime().UnixNano())
}

// replaceFile renames tmp over path, both in one folder
// (fileWriter.commit), with POSIX semantics where the file system has them
// (os.Root.Rename: FILE_RENAME_POSIX_SEMANTICS, else a plain replacing
// rename). os.Rename's MoveFileEx fails with ERROR_ACCESS_DENIED while any
// handle holds the replaced file open, even one shared for deletion, and a
// commit always holds one: withLocked's lock handle on that very file.
func replaceFile(tmp, path string) error {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer root.Close()
	return root.Rename(filepath.Base(tmp), filepath.Base(path))
}

// openShared opens path for reading with FILE_SHARE_DELETE, as unix opens
// every file: os.Open's handles would make a commit's rename over the path
// (or a Delete) fail while a cached read handle or a reader holds the file.
func openShared(path string) (*os.File, error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := syscall.CreateFile(p, syscall.GENERIC_READ,
		syscall.FILE_SHARE_READ|syscall.FILE_SHARE_WRITE|syscall.FILE_SHARE_DELETE,
		nil, syscall.OPEN_EXISTING, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// lockInode takes an exclusive LockFileEx lock on fh's file (withLocked).
// Windows byte-range locks are mandatory, so the lock covers one byte far
// past any end of file: readers of the file are not blocked, while every
// withLocked caller locks the same byte.
func (f *fileStore) lockInode(fh *os.File) (unlock func(), err error) {
	h := windows.Handle(fh.Fd())
	ol := &windows.Overlapped{Offset: ^uint32(0), OffsetHigh: 1<<31 - 1}
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol); err != nil {
		return nil, err
	}
	return func() { windows.UnlockFileEx(h, 0, 1, 0, ol) }, nil
}
