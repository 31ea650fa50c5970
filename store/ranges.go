package store

import (
	"context"
	"io"
)

// RangesReader is implemented by stores that read several ranges of one
// object for less than a request each. The file store does: one stat and
// one cached handle for the batch, then one pread(2) per range, where
// NewRangeReader costs a validated path, a stat and a handle lookup per
// range (a light row-index lookup on prepared files reads ≈75 ranges of a
// few KiB, and that overhead was ≈15 % of its CPU). Counting and Sub pass
// it through; other stores are read a range at a time by ReadRanges.
type RangesReader interface {
	// ReadRanges reads bufs[i] at offs[i] of the object at key, in order,
	// as NewRangeReader and io.ReadFull would, and returns how many bytes
	// each got. The first error stops the batch; a range past the
	// object's end is io.ErrUnexpectedEOF. Every range is one request in
	// the store's accounting.
	ReadRanges(ctx context.Context, key string, offs []int64, bufs [][]byte) ([]int, error)
	// BatchesRanges reports whether ReadRanges costs less than a
	// NewRangeReader per range. A wrapper answers for the store it wraps:
	// false means ReadRanges reads the ranges one by one, and a caller
	// that wants them concurrently (remote stores) issues them itself.
	BatchesRanges() bool
}

// BatchesRanges reports whether s reads several ranges of one object for
// less than a request each (RangesReader.BatchesRanges).
func BatchesRanges(s Store) bool {
	rr, ok := s.(RangesReader)
	return ok && rr.BatchesRanges()
}

// ReadRanges reads bufs[i] at offs[i] of key in s for every i: through s's
// RangesReader, or else one NewRangeReader per range. See
// RangesReader.ReadRanges.
func ReadRanges(ctx context.Context, s Store, key string, offs []int64, bufs [][]byte) ([]int, error) {
	if rr, ok := s.(RangesReader); ok {
		return rr.ReadRanges(ctx, key, offs, bufs)
	}
	ns := make([]int, len(offs))
	for i, off := range offs {
		rc, err := s.NewRangeReader(ctx, key, off, int64(len(bufs[i])))
		if err != nil {
			return ns, err
		}
		ns[i], err = io.ReadFull(rc, bufs[i])
		rc.Close()
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return ns, err
		}
	}
	return ns, nil
}

// ReadRanges implements RangesReader: one handle for the batch (so the
// batch reads one version of the object, as a reader opened once would),
// checked by a stat of the path unless it was less than recheckAfter ago,
// then each range copied out of the handle's mapping of the file where that
// part of the file was read before, else read with one pread (also where
// the file is not mapped, or has grown past the mapping). A pread of the
// few KiB of a range costs ≈2–4 µs of system time here, a copy out of the
// mapping ≈0.8 µs once its pages are mapped, but the first touch of a
// mapped window faults (mapWindow).
func (f *fileStore) ReadRanges(ctx context.Context, key string, offs []int64, bufs [][]byte) ([]int, error) {
	ns := make([]int, len(offs))
	h, size, err := f.openReadWith(ctx, f.handles.acquireRecent, key, offs...)
	if err != nil {
		return ns, err
	}
	defer f.handles.release(h)
	restated := false
	for i, off := range offs {
		if i > 0 {
			if err := ctx.Err(); err != nil {
				return ns, err
			}
		}
		if off+int64(len(bufs[i])) > size && !restated {
			// size may be a stat up to recheckAfter old: before a range
			// past it fails, the open file's size now decides, so a file
			// grown in place since is read at once. A truncated file, or
			// the old inode of a replaced one, still ends short.
			size, restated = f.handles.restat(h, size), true
		}
		n, err := h.readRange(key, bufs[i], off, size)
		ns[i] = n
		if err != nil {
			return ns, err
		}
	}
	return ns, nil
}

// readRange reads buf at off of the handle's file, whose size was size at
// the batch's stat: io.ErrUnexpectedEOF past the object's end, an I/O
// error as ErrStorage. A copy out of the mapping that faults is the file
// truncated since the stat when its size now ends before the range (a
// short read, as pread's would be), an I/O error otherwise.
func (h *fileHandle) readRange(key string, buf []byte, off, size int64) (int, error) {
	want := min(max(size-off, 0), int64(len(buf)))
	var n int
	var err error
	if m := h.mapping(); off+want <= int64(len(m)) && h.mapped(off, want) {
		n, err = copyMapped(buf[:want], m, off)
		if err != nil {
			if fi, serr := h.f.Stat(); serr == nil && fi.Size() < off+want {
				n, err = 0, io.EOF
			}
		}
	} else {
		n, err = h.f.ReadAt(buf[:want], off)
	}
	if err != nil && err != io.EOF {
		return n, readFailure(key, err) // an I/O error: ErrStorage
	}
	if n < len(buf) {
		return n, io.ErrUnexpectedEOF // past the object's end
	}
	return n, nil
}

// BatchesRanges implements RangesReader.
func (f *fileStore) BatchesRanges() bool { return true }

// BatchesRanges implements RangesReader: the wrapped store's answer.
func (c *Counting) BatchesRanges() bool { return BatchesRanges(c.s) }

// BatchesRanges implements RangesReader: the wrapped store's answer.
func (v *subStore) BatchesRanges() bool { return BatchesRanges(v.s) }

// ReadRanges implements RangesReader: the wrapped store's, every range
// counted as one read request.
func (c *Counting) ReadRanges(ctx context.Context, key string, offs []int64, bufs [][]byte) ([]int, error) {
	c.c[OpRead].requests.Add(int64(len(offs)))
	ns, err := ReadRanges(ctx, c.s, key, offs, bufs)
	for _, n := range ns {
		c.c[OpRead].bytes.Add(int64(n))
	}
	return ns, err
}

// ReadRanges implements RangesReader on the wrapped store.
func (v *subStore) ReadRanges(ctx context.Context, key string, offs []int64, bufs [][]byte) ([]int, error) {
	k, err := v.key(key)
	if err != nil {
		return make([]int, len(offs)), err
	}
	return ReadRanges(ctx, v.s, k, offs, bufs)
}
