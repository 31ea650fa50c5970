//go:build !unix

package store

import (
	"fmt"
	"io/fs"
)

// fileETag derives an ETag from the size and mtime in nanoseconds: there
// is no portable inode number to add. Every commit sets its file's mtime
// to the time of the commit in nanoseconds (fileWriter.Close), so a
// replacement still gets a new ETag unless two commits of the same size
// happen within the clock's resolution (100 ns on Windows), which the
// fsync of each commit rules out in practice.
func fileETag(fi fs.FileInfo) string {
	return fmt.Sprintf("0-%x-%x", fi.Size(), fi.ModTime().UnixNano())
}
