//go:build unix && !ariadne_nomap

package store

import (
	"io"
	"runtime/debug"
	"sync/atomic"
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
			h.seen = make([]atomic.Uint64, (size+mapWindow*64-1)/(mapWindow*64))
		}
	})
	return h.mm
}

// mapWindow is the span of the file one page fault maps: Linux maps a
// faulting page's neighbours that are in the page cache within an aligned
// window of fault_around_bytes (64 KiB by default). A first touch of a
// window through the mapping costs that fault: ≈5–9 µs here (a VM),
// where a pread(2) of a 6.5 KiB range costs ≈2.2 µs and a copy out of an
// already mapped window ≈0.8 µs (random 6.5 KiB ranges of the 1 GB
// benchmark lake, docs/rowindex-bench.md). So a window is read with pread
// the first time and through the mapping from its second read on: a
// light lookup's ranges, which rarely come back, cost a pread, while the
// parts of a file read again and again cost a copy.
const mapWindow = 64 << 10

// mapped reports whether the range [off, off+n) of the mapping is to be
// copied out of it: every window it spans was read before. It marks the
// windows read.
func (h *fileHandle) mapped(off, n int64) bool {
	if n <= 0 {
		return true
	}
	all := true
	for w := off / mapWindow; w <= (off+n-1)/mapWindow; w++ {
		word, bit := &h.seen[w/64], uint64(1)<<(w%64)
		if word.Load()&bit == 0 {
			word.Or(bit)
			all = false
		}
	}
	return all
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
