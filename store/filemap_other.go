//go:build !unix || ariadne_nomap

package store

// Without mmap(2) (Windows, or unix built with the ariadne_nomap tag,
// which tests this fallback) ReadRanges reads every
// range with ReadAt: the same bytes and errors, without the mapping's
// saving on ranges read again.

// mapping returns nil: the handle's file is never mapped.
func (h *fileHandle) mapping() []byte { return nil }

// mapped reports true: no window is ever copied out of a (nil) mapping,
// since readRange copies only ranges that lie inside it.
func (h *fileHandle) mapped(off, n int64) bool { return true }

// unmap does nothing: there is no mapping.
func (h *fileHandle) unmap() {}

// copyMapped is never reached without a mapping (readRange).
func copyMapped(buf, m []byte, off int64) (int, error) { return copy(buf, m[off:]), nil }
