//go:build !unix && !windows

package store

import "os"

// openShared opens path for reading.
func openShared(path string) (*os.File, error) { return os.Open(path) }

// lockInode serializes withLocked callers of this store: these systems
// (plan9, js, wasip1) have no advisory file locks, so a check-and-replace
// (IfMatch, Delete) is atomic among one store's callers only, not across
// processes or stores.
func (f *fileStore) lockInode(*os.File) (unlock func(), err error) {
	f.commitMu.Lock()
	return f.commitMu.Unlock, nil
}
