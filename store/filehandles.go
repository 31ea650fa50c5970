package store

import (
	"container/list"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// maxOpenFiles bounds the read handles a file store keeps open between
// ranged reads. A row-index lookup reads a few ranges from each of up to a
// few hundred data files, and opening the file for every range (open,
// fstat, the poller's registration attempt, close) was ≈9 % of a warm
// lookup's CPU on prepared files. 256 handles cover a lake of a year of
// daily files while staying far below the usual descriptor limits.
const maxOpenFiles = 256

// recheckAfter is how long a batch of ranged reads (ReadRanges) trusts a
// cached handle's last stat. The stat (an fstatat of the path) was ≈6 % of
// a warm light lookup's CPU on prepared files, which reads a batch from
// each of ≈30 files; a file read again within this window is read through
// the handle and at the size that stat saw. So a file replaced (a new
// inode renamed over its path) or deleted less than this long after its
// last check is read as it was at that check, as an NFS client's attribute cache would
// (acregmin is 3 s). A file grown in place within the window is read at
// its new size: a range past the size the stat saw makes the batch fstat
// its handle before failing (fileStore.ReadRanges). A file truncated in place within the window is found
// where a range lies in whole pages past its new end (the copy out of the
// mapping faults: fileHandle.readRange's io.ErrUnexpectedEOF), and where a
// range is read with pread (its window's first read: a short read); bytes
// of the one page holding the new end copied out of the mapping (a window
// read before) read as zeros until the next stat.
// Every other read (NewRangeReader, Stat: manifests, fragments, commits)
// checks the path each time.
const recheckAfter = time.Second

// handleCache keeps read handles of a file store's objects open, at most
// maxOpenFiles, least recently used evicted first. It is safe for
// concurrent use.
//
// A cached handle is used only while the object's path still names its
// inode: every read first stats the path (one fstatat, cheaper than open +
// fstat + close), so a replaced object (commits rename a new inode over the
// path) is never read through the old handle, exactly as if the file were
// opened for each read; only batches of ranged reads (acquireRecent) skip
// the stat within recheckAfter of the last one. An evicted or replaced handle is closed once the
// readers using it are closed. A handle of a deleted object stays open
// (holding its disk space) until evicted or the store is closed.
type handleCache struct {
	mu     sync.Mutex
	max    int
	closed bool
	// recheck is how long acquireRecent trusts a handle's last stat
	// (recheckAfter; tests shorten it).
	recheck time.Duration
	ll      *list.List               // of *fileHandle, front = most recent
	byPath  map[string]*list.Element // cached handles
}

// fileHandle is one open read handle, shared by the readers using it.
type fileHandle struct {
	path   string
	f      *os.File
	fi     fs.FileInfo // at open: identifies the inode
	refs   int         // open readers, plus one while cached
	cached bool
	// checked is when a stat of the path last found this handle's inode,
	// and size the size it saw (handleCache.mu guards both).
	checked time.Time
	size    int64

	// The file mapped for ReadRanges (filemap_unix.go), made once on first
	// use and unmapped when the handle closes: a warm light lookup copies
	// its pages out of the page cache without a pread(2) per range.
	mapOnce sync.Once
	mm      []byte
	// seen has a bit per mapWindow bytes of the mapping, set once a
	// range in that window was read (filemap_unix.go).
	seen []atomic.Uint64
}

// close unmaps and closes the handle (its last reference is gone).
func (h *fileHandle) close() error {
	h.unmap()
	return h.f.Close()
}

func newHandleCache(max int) *handleCache {
	return &handleCache{max: max, recheck: recheckAfter, ll: list.New(), byPath: map[string]*list.Element{}}
}

// acquireRecent is acquire, without the stat when the cached handle of path
// was found current less than c.recheck ago: it returns the size seen then.
func (c *handleCache) acquireRecent(path string) (*fileHandle, int64, error) {
	c.mu.Lock()
	if e, ok := c.byPath[path]; ok {
		h := e.Value.(*fileHandle)
		if time.Since(h.checked) < c.recheck {
			h.refs++
			c.ll.MoveToFront(e)
			size := h.size // acquire updates it under c.mu
			c.mu.Unlock()
			return h, size, nil
		}
	}
	c.mu.Unlock()
	return c.acquire(path)
}

// acquire returns a handle of the regular file at path, with its current
// size, and a reference the caller must give back with release. A handle
// is reused when the path still names its inode.
func (c *handleCache) acquire(path string) (*fileHandle, int64, error) {
	now := time.Now()
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		err = errNotRegular
	}
	if err != nil {
		c.forget(path)
		return nil, 0, err
	}
	c.mu.Lock()
	if e, ok := c.byPath[path]; ok {
		h := e.Value.(*fileHandle)
		if os.SameFile(h.fi, fi) {
			h.refs++
			h.checked, h.size = now, fi.Size()
			c.ll.MoveToFront(e)
			c.mu.Unlock()
			return h, fi.Size(), nil
		}
	}
	c.mu.Unlock()
	f, err := openShared(path)
	if err != nil {
		return nil, 0, err
	}
	ofi, err := f.Stat()
	if err == nil && !ofi.Mode().IsRegular() {
		err = errNotRegular
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	h := &fileHandle{path: path, f: f, fi: ofi, refs: 1, checked: now, size: ofi.Size()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return h, ofi.Size(), nil // uncached: closed by its reader
	}
	if e, ok := c.byPath[path]; ok {
		c.drop(e)
	}
	h.refs++
	h.cached = true
	c.byPath[path] = c.ll.PushFront(h)
	for c.ll.Len() > c.max {
		c.drop(c.ll.Back())
	}
	return h, ofi.Size(), nil
}

// restat returns the size of h's open file now (fstat), recording it as
// the size later batches within the recheck window trust; size (the last
// size seen) if the fstat fails. The path is not checked: a batch reads
// the inode its handle holds.
func (c *handleCache) restat(h *fileHandle, size int64) int64 {
	fi, err := h.f.Stat()
	if err != nil {
		return size
	}
	c.mu.Lock()
	h.size = fi.Size()
	c.mu.Unlock()
	return fi.Size()
}

// release gives back a reference from acquire.
func (c *handleCache) release(h *fileHandle) error {
	c.mu.Lock()
	h.refs--
	last := h.refs == 0
	c.mu.Unlock()
	if last {
		return h.close()
	}
	return nil
}

// forget drops the handle cached for path (its object is gone or is no
// longer a regular file).
func (c *handleCache) forget(path string) {
	c.mu.Lock()
	e, ok := c.byPath[path]
	if ok {
		c.drop(e)
	}
	c.mu.Unlock()
}

// drop removes a cached handle (c.mu held), closing it unless readers
// still use it (the last one closes it).
func (c *handleCache) drop(e *list.Element) {
	h := e.Value.(*fileHandle)
	c.ll.Remove(e)
	delete(c.byPath, h.path)
	h.cached = false
	h.refs--
	if h.refs == 0 {
		h.close()
	}
}

// close drops every cached handle; later reads open their files uncached.
func (c *handleCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for c.ll.Len() > 0 {
		c.drop(c.ll.Back())
	}
}

// open reports the cached handles (for tests).
func (c *handleCache) open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
