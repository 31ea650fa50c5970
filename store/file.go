package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
)

// tmpPrefix starts the name of every temporary file the file backend
// creates. List never returns such names and keys with a segment that starts
// with it are rejected, so an in-flight or abandoned temporary file is never
// mistaken for an object. The leading "." also makes Spark and Delta readers
// (which skip names starting with "." or "_") ignore it.
const tmpPrefix = ".ariadne-tmp-"

// fileStore is the file:// backend, written on the os package rather than
// gocloud's fileblob, which writes ".attrs" sidecar files next to every
// object (they would appear inside Delta tables that Spark reads) and whose
// IfNotExist is a check-then-write, not atomic across processes.
//
// Commits:
//   - every write goes to a temporary file in the object's own folder,
//     fsynced, its mtime set to the current time in nanoseconds;
//   - IfNotExist: link(2) the temporary file to the key's path, which fails
//     with EEXIST if any file is there (atomic across processes), then
//     remove the temporary name;
//   - otherwise: take an exclusive lock (flock(2); LockFileEx on Windows) on the current object's inode
//     (if there is one), check that the path still names that inode and,
//     for IfMatch, that its ETag matches, then rename(2) the temporary file
//     over the path and unlock. Deletes do the same with unlink(2). Every
//     replacement and removal of an object holds the lock of the inode it
//     replaces, so check-and-replace is atomic across processes.
//
// Durability: the file's data is fsynced before it is linked or renamed
// into place; the folder is not, so a machine crash right after Close may
// lose the newest commit, but never exposes a partially written object.
//
// ETags are derived from (inode, size, mtime in ns); without inode numbers
// (Windows, file_windows.go) from (size, mtime in ns). A replacement always
// has a new inode and a new mtime, so its ETag differs even if the kernel
// reuses a freed inode number for it.
//
// Folders: parents are created on write; Delete removes the folders it left
// empty, up to (not including) the root, so a deleted table's folder
// disappears as it would on object storage. Unlike on object storage, a key
// cannot be both an object and a folder ("a" and "a/b"): the second write
// fails.
type fileStore struct {
	root    string // absolute, cleaned
	url     string
	handles *handleCache // read handles kept open between ranged reads
}

// newFile returns a store rooted at the absolute folder root (which need not
// exist yet).
func newFile(root string) *fileStore {
	root = filepath.Clean(root)
	return &fileStore{root: root, url: (&url.URL{Scheme: "file", Path: filepath.ToSlash(root)}).String(),
		handles: newHandleCache(maxOpenFiles)}
}

// path maps a key to its path below the root, after validating it.
func (f *fileStore) path(op, key string) (string, error) {
	if err := ValidKey(key); err != nil {
		return "", err
	}
	if filepath.Separator == '/' && f.root != "/" {
		// A valid key is clean (non-empty segments, none "." or ".."),
		// so this is filepath.Join without its Clean, which was ≈3 % of
		// a light row-index lookup (one path per ranged read).
		return f.root + "/" + key, nil
	}
	return filepath.Join(f.root, filepath.FromSlash(key)), nil
}

// mapErr turns an os error into the store's errors.
func mapErr(op, key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotRegular) || errors.Is(err, errNotDirSyscall) {
		return notExist(op, key)
	}
	return &OpError{Op: op, Key: key, Err: err}
}

var errNotRegular = errors.New("not a regular file")

// errNotDirSyscall is what a path through a regular file fails with.
var errNotDirSyscall error = syscall.ENOTDIR

func (f *fileStore) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	p, err := f.path("stat", key)
	if err != nil {
		return ObjectInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return ObjectInfo{}, err
	}
	fi, err := os.Stat(p)
	if err == nil && !fi.Mode().IsRegular() {
		err = errNotRegular
	}
	if err != nil {
		return ObjectInfo{}, mapErr("stat", key, err)
	}
	return fileInfo(key, fi), nil
}

func fileInfo(key string, fi fs.FileInfo) ObjectInfo {
	return ObjectInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime(), ETag: fileETag(fi)}
}

// openRead checks a read of key at offsets offs and returns a handle of
// the object (given back with f.handles.release) and its size.
func (f *fileStore) openRead(ctx context.Context, key string, offs ...int64) (*fileHandle, int64, error) {
	return f.openReadWith(ctx, f.handles.acquire, key, offs...)
}

// openReadWith is openRead with the handle cache's acquire or
// acquireRecent.
func (f *fileStore) openReadWith(ctx context.Context, acquire func(string) (*fileHandle, int64, error), key string, offs ...int64) (*fileHandle, int64, error) {
	p, err := f.path("read", key)
	if err != nil {
		return nil, 0, err
	}
	for _, off := range offs {
		if err := checkRange(key, off); err != nil {
			return nil, 0, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	h, size, err := acquire(p)
	if err != nil {
		return nil, 0, mapErr("read", key, err)
	}
	return h, size, nil
}

func (f *fileStore) NewRangeReader(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	h, size, err := f.openRead(ctx, key, offset)
	if err != nil {
		return nil, err
	}
	// A SectionReader reads with pread(2) from the opened inode: a
	// concurrent replacement of the object does not affect this reader.
	n := size - offset
	if n < 0 {
		n = 0
	}
	if length >= 0 && length < n {
		n = length
	}
	return &fileReader{SectionReader: io.NewSectionReader(h.f, offset, n), h: h, c: f.handles, key: key}, nil
}

type fileReader struct {
	*io.SectionReader
	h      *fileHandle
	c      *handleCache
	key    string
	closed atomic.Bool
}

// Close gives the shared handle back (a second Close is a no-op).
func (r *fileReader) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	return r.c.release(r.h)
}

// Read marks I/O errors (EIO, a vanished mount) as the request's
// (ErrStorage); a file shorter than at open ends with io.EOF as before.
func (r *fileReader) Read(p []byte) (int, error) {
	n, err := r.SectionReader.Read(p)
	return n, readFailure(r.key, err)
}

// ReadAt is Read's counterpart for ranged reads of the open file.
func (r *fileReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.SectionReader.ReadAt(p, off)
	return n, readFailure(r.key, err)
}

func (f *fileStore) NewWriter(ctx context.Context, key string, opts *WriteOptions) (Writer, error) {
	p, err := f.path("write", key)
	if err != nil {
		return nil, err
	}
	if err := checkWriteOptions(key, opts); err != nil {
		return nil, err
	}
	for _, seg := range strings.Split(key, "/") {
		if strings.HasPrefix(seg, tmpPrefix) {
			return nil, &KeyError{Key: key, Reason: "segment starts with the reserved " + tmpPrefix}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tmp, err := f.createTemp(filepath.Dir(p))
	if err != nil {
		return nil, mapWriteErr(key, err)
	}
	w := &fileWriter{f: f, ctx: ctx, key: key, path: p, tmp: tmp}
	if opts != nil {
		w.opts = *opts
	}
	return w, nil
}

func mapWriteErr(key string, err error) error {
	return &OpError{Op: "write", Key: key, Err: err}
}

// maxMkdirRetries bounds the retries of createTemp when a concurrent Delete
// removes the folder between our MkdirAll and our create. Each retry means
// another process deleted the last object of that very folder in that
// instant; 10 such coincidences in a row do not happen by chance.
const maxMkdirRetries = 10

// createTemp creates a temporary file in dir, creating dir (and parents) if
// needed.
func (f *fileStore) createTemp(dir string) (*os.File, error) {
	var err error
	for range maxMkdirRetries {
		if err = os.MkdirAll(dir, 0o777); err != nil {
			return nil, err
		}
		var tmp *os.File
		tmp, err = os.OpenFile(filepath.Join(dir, tmpPrefix+uuid.NewString()), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return tmp, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return nil, err
}

type fileWriter struct {
	f    *fileStore
	ctx  context.Context
	key  string
	path string
	opts WriteOptions
	tmp  *os.File // nil once closed or aborted
}

func (w *fileWriter) Write(p []byte) (int, error) {
	if w.tmp == nil {
		return 0, errWriterDone
	}
	n, err := w.tmp.Write(p)
	if err != nil {
		w.Abort()
		return n, mapWriteErr(w.key, err)
	}
	return n, nil
}

func (w *fileWriter) Abort() error {
	if w.tmp == nil {
		return nil
	}
	name := w.tmp.Name()
	w.tmp.Close()
	w.tmp = nil
	w.f.removeEmptyParents(filepath.Dir(w.path), name)
	return nil
}

func (w *fileWriter) Close() error {
	if w.tmp == nil {
		return errWriterDone
	}
	tmp := w.tmp
	w.tmp = nil
	name := tmp.Name()
	err := w.ctx.Err()
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// Nanosecond mtime (the kernel's own is clock-tick coarse) makes the
		// ETag of every commit unique; see fileStore.
		now := time.Now()
		err = os.Chtimes(name, now, now)
	}
	if err == nil {
		err = w.commit(name)
	}
	if err == nil {
		removeHadoopChecksum(w.path)
	}
	if err != nil {
		w.f.removeEmptyParents(filepath.Dir(w.path), name)
		var oe *OpError
		if errors.As(err, &oe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return mapWriteErr(w.key, err)
	}
	return nil
}

// commit moves the finished temporary file to the key; see fileStore.
func (w *fileWriter) commit(tmp string) error {
	if w.opts.IfNotExist {
		err := os.Link(tmp, w.path)
		if errors.Is(err, fs.ErrExist) {
			return precondition("write", w.key, "object exists")
		}
		if err != nil {
			return err
		}
		// Committed. The temporary name is only a second link to the new
		// object; failing to remove it must not report the commit as failed
		// (List never shows it, and Close's error path retries the remove).
		os.Remove(tmp)
		return nil
	}
	return w.f.withLocked(w.path, func(cur fs.FileInfo) error {
		if w.opts.IfMatch != "" {
			if cur == nil {
				return precondition("write", w.key, "object does not exist")
			}
			if fileETag(cur) != w.opts.IfMatch {
				return precondition("write", w.key, "ETag does not match")
			}
		}
		if cur != nil && !cur.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", w.path)
		}
		return replaceFile(tmp, w.path)
	})
}

func (f *fileStore) Delete(ctx context.Context, key string, opts *DeleteOptions) error {
	p, err := f.path("delete", key)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err = f.withLocked(p, func(cur fs.FileInfo) error {
		if cur == nil || !cur.Mode().IsRegular() {
			return notExist("delete", key)
		}
		if opts != nil && opts.IfMatch != "" && fileETag(cur) != opts.IfMatch {
			return precondition("delete", key, "ETag does not match")
		}
		return os.Remove(p)
	})
	if err != nil {
		var oe *OpError
		if errors.As(err, &oe) {
			return err
		}
		return mapErr("delete", key, err)
	}
	removeHadoopChecksum(p)
	f.removeEmptyParents(filepath.Dir(p), "")
	return nil
}

// removeHadoopChecksum removes the checksum side file ".<name>.crc" that
// Hadoop's local file system (Spark's, hence the Spark library's) keeps
// beside every file it writes, once we have replaced or deleted that file.
// Hadoop verifies a file against its side file when one exists, so a stale
// one makes Spark refuse the file we rewrote (the library reports our
// metadata.json as "missing or corrupt"); with none it reads the file as is.
// Hadoop's own delete and overwrite drop the side file the same way.
func removeHadoopChecksum(path string) {
	os.Remove(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".crc"))
}

// removeEmptyParents removes the file name (if not "") and then dir and its
// parents while they are empty, stopping below the root. rmdir(2) fails on a
// folder that is not empty, so this never removes anything a concurrent
// writer put there (its temporary file keeps the folder alive).
func (f *fileStore) removeEmptyParents(dir, name string) {
	if name != "" {
		os.Remove(name)
	}
	inside := f.root
	if !strings.HasSuffix(inside, string(filepath.Separator)) {
		inside += string(filepath.Separator)
	}
	for strings.HasPrefix(dir, inside) && len(dir) > len(inside) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

func (f *fileStore) List(ctx context.Context, opts ListOptions) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		if err := validPrefix(opts.Prefix); err != nil {
			yield(ObjectInfo{}, err)
			return
		}
		if err := checkDelimiter(opts.Delimiter); err != nil {
			yield(ObjectInfo{}, err)
			return
		}
		// Start at the deepest folder the prefix names in full; the rest of
		// the prefix filters that folder's entries.
		dirKey, namePrefix := "", opts.Prefix
		if i := strings.LastIndexByte(opts.Prefix, '/'); i >= 0 {
			dirKey, namePrefix = opts.Prefix[:i], opts.Prefix[i+1:]
		}
		l := fileLister{f: f, ctx: ctx, delim: opts.Delimiter != "", yield: yield}
		l.walk(dirKey, namePrefix)
	}
}

type fileLister struct {
	f     *fileStore
	ctx   context.Context
	delim bool
	yield func(ObjectInfo, error) bool
}

// walk lists the folder dirKey (relative to the root) in ascending key
// order, only entries whose names start with namePrefix. It returns false
// when iteration must stop.
func (l *fileLister) walk(dirKey, namePrefix string) bool {
	if err := l.ctx.Err(); err != nil {
		l.yield(ObjectInfo{}, err)
		return false
	}
	dir := filepath.Join(l.f.root, filepath.FromSlash(dirKey))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDirSyscall) {
		return true // a folder that vanished (or never was) lists as empty
	}
	if err != nil {
		l.yield(ObjectInfo{}, &OpError{Op: "list", Key: dirKey, Err: err})
		return false
	}
	entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool {
		return !strings.HasPrefix(e.Name(), namePrefix) || strings.HasPrefix(e.Name(), tmpPrefix) ||
			!(e.IsDir() || e.Type().IsRegular()) || ValidKey(JoinKey(dirKey, e.Name())) != nil
	})
	// Keys sort by their bytes, and a folder's keys all continue with "/",
	// so a folder sorts as its name followed by "/".
	sortName := func(e fs.DirEntry) string {
		if e.IsDir() {
			return e.Name() + "/"
		}
		return e.Name()
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(sortName(a), sortName(b)) })
	for _, e := range entries {
		key := JoinKey(dirKey, e.Name())
		if e.IsDir() {
			if l.delim {
				if !l.hasObject(key) {
					continue
				}
				if !l.yield(ObjectInfo{Key: key + "/", IsDir: true}, nil) {
					return false
				}
				continue
			}
			if !l.walk(key, "") {
				return false
			}
			continue
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since ReadDir
		}
		if err != nil {
			l.yield(ObjectInfo{}, &OpError{Op: "list", Key: key, Err: err})
			return false
		}
		if !l.yield(fileInfo(key, fi), nil) {
			return false
		}
	}
	return true
}

// hasObject reports whether the folder dirKey holds at least one object at
// any depth: a delimited List reports a common prefix only then, as object
// stores do (a folder holding only temporary files is not a prefix).
func (l *fileLister) hasObject(dirKey string) bool {
	found := false
	sub := fileLister{f: l.f, ctx: l.ctx, yield: func(_ ObjectInfo, err error) bool {
		found = err == nil
		return false
	}}
	sub.walk(dirKey, "")
	return found
}

func (f *fileStore) URL() string { return f.url }

// Close closes the read handles kept open; the store stays usable (later
// reads open their files for themselves).
func (f *fileStore) Close() error {
	f.handles.close()
	return nil
}
