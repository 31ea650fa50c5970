//go:build unix

package store

import (
	"io"
	"runtime/debug"
	"syscall"
)

// maxMappedFile bounds the files whose handles ReadRanges maps: larger
// files are read with pread(2) (a mapping costs address space only, but a
// lake of many-GB files under 256 cached handles would reserve a lot of
// it).
const maxMappedFile = 1 << 30

// mapping returns a read-only shared mapping of the handle's file as it
// was at open, made on first use (nil: empty, too large, or mmap failed;
// the caller reads with pread then). It stays until the handle is closed.
func (h *fileHandle) mapping() []byte {
	h.mapOnce.Do(func() {
		size := h.fi.Size()
		if size <= 0 || size > maxMappedFile {
			return
		}
		b, err := syscall.Mmap(int(h.f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
		if err == nil {
			h.mm = b
		}
	})
	return h.mm
}

// unmap releases the mapping (the last reference is gone).
func (h *fileHandle) unmap() {
	if h.mm != nil {
		syscall.Munmap(h.mm)
		h.mm = nil
	}
}

// copyMapped copies m[off:] into buf. A file truncated after its stat makes
// the copy fault on the pages past its new end (SIGBUS): the fault becomes
// a panic on this goroutine (debug.SetPanicOnFault), recovered here as
// io.ErrUnexpectedEOF; the caller (fileHandle.readRange) tells a truncation
// (a short read, as pread's past the end) from an I/O error by the file's
// size.
func copyMapped(buf, m []byte, off int64) (n int, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if re, ok := r.(interface{ Addr() uintptr }); ok && re != nil {
				n, err = 0, io.ErrUnexpectedEOF
				return
			}
			panic(r)
		}
	}()
	return copy(buf, m[off:]), nil
}
