package rowindex

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/ariadne-go/ariadne/internal/proc"
)

// The build's external sort. Scanning workers append entries to a runBuffer
// (one per worker): one 32-byte sort reference per entry (runRef), which
// holds the whole entry when its key is short and it has no cover (an int
// or float key, the common case), plus a compact arena of encoded entries
// for the others (long keys, cover values, aggregate partials): 32 bytes
// per entry instead of the ≈150 of an entry struct with its own key and
// cover slices. A full buffer is sorted and spilled to a run file; the last
// buffer of each worker stays in memory as a run. mergeRuns then streams
// every run in fragment order (compareEntries) into the fragment writer.
//
// Entries held whole in their refs are what keeps the sort and the merge
// fast: the radix sort moves them and settles equal keys on their (file,
// rg, row) digits, and reading a sorted buffer walks the refs in order,
// where chasing each ref into the arena was a cache miss per entry (a
// third of a build's CPU on an arrival-order lake).
//
// Encoded entry (arena and run files):
//
//	uvarint len(rest) | uvarint len(key) | key | file int32 LE | rg int32 LE |
//	uvarint row | uvarint n | uvarint len(cover) | cover
//
// A run file holds, per entry in order, the bucket as a big-endian uint16
// followed by the encoded entry, or, for an entry a ref holds whole, by
// refMark and the ref (appendRefRecord).

// runRef is one entry of a runBuffer: its sort key as three big-endian
// words, so that the order of two refs of short keys is the order of their
// words and a radix digit is a shift, and where its encoded record is when
// the ref does not hold it whole:
//
//   - w[0]: the bucket (16 bits), the key's tag byte, and the first five of
//     the key's eight bytes after the tag (zero-padded);
//   - w[1]: the last three of those eight bytes, the key's length capped at
//     shortKeys+1 (8 bits), the file id (sign bit flipped: unsigned order is
//     signed order);
//   - w[2]: the row group (sign bit flipped) and the row within it (a row
//     group has at most MaxInt32 rows);
//   - n: the entry's row count;
//   - off: noRecord when the ref is the whole entry (a key of at most
//     shortKeys bytes, all in the words, and no cover), else the record's
//     place in the arena (bigRef: an index in runBuffer.big), with slowRef
//     when the key is longer than shortKeys, so that the order needs the
//     records' keys between the length and the file.
type runRef struct {
	w   [3]uint64
	off uint32
	n   uint32
}

const (
	slowRef   = 1 << 31          // off: a key longer than shortKeys (compare the records' keys)
	bigRef    = 1 << 30          // off: an index in runBuffer.big, not an arena offset
	noRecord  = 1<<32 - 1        // off: the ref holds the whole entry
	shortKeys = 9                // keys of at most this length are whole in the words
	maxRefRow = 1<<32 - 1        // row and n of a ref (a row group has at most MaxInt32 rows)
	_         = uint32(noRecord) // noRecord fits off
)

func (r runRef) bucket() int32  { return int32(r.w[0] >> 48) }
func (r runRef) keyLen() uint32 { return uint32(byte(r.w[1] >> 32)) } // capped at shortKeys+1
func (r runRef) file() int32    { return int32(uint32(r.w[1]) ^ 1<<31) }
func (r runRef) rg() int32      { return int32(uint32(r.w[2]>>32) ^ 1<<31) }
func (r runRef) row() uint32    { return uint32(r.w[2]) }

// compareRefs orders two entries of b in fragment order.
func (b *runBuffer) compareRefs(x, y runRef) int {
	if c := cmp.Compare(x.w[0], y.w[0]); c != 0 { // bucket, tag, key bytes 1-5
		return c
	}
	if x.keyLen() > shortKeys && y.keyLen() > shortKeys && x.w[1]>>32 == y.w[1]>>32 {
		// Two long keys sharing their first nine bytes: their records
		// settle it, then (file, rg, row).
		var ex, ey entry
		decodeRecord(b.record(x), &ex)
		decodeRecord(b.record(y), &ey)
		if c := bytes.Compare(ex.Key, ey.Key); c != 0 {
			return c
		}
	}
	// Key bytes 6-8 then the length (of two keys equal up to the shorter,
	// zero-padded, the shorter is first), the file, the row group, the row.
	return cmp.Or(cmp.Compare(x.w[1], y.w[1]), cmp.Compare(x.w[2], y.w[2]))
}

// refBytes is the size of a runRef.
const refBytes = 32

// runBlockBytes is the largest size of a runBuffer's arena blocks (a
// quarter of the buffer's limit when that is smaller). Blocks are reused
// across spills, so a worker's memory stays at its limit.
const runBlockBytes = 1 << 20

func newRunBuffer(limit int64) *runBuffer {
	return &runBuffer{limit: limit, block: int(max(min(limit/4, runBlockBytes), 4<<10))}
}

// runBuffer accumulates entries of one worker until its memory limit.
type runBuffer struct {
	limit  int64 // bytes of blocks + refs at which the buffer must be spilled
	block  int   // size of a block
	blocks [][]byte
	cur    int // block being filled
	refs   []runRef
	big    [][]byte // entries larger than a block, one allocation each
	// scratch is keyWindowSort's, allocated at its first use and reused
	// (charged from the start: sortScratchBytes per ref).
	scratch []uint64
	// order, when set, is the sorted order that keyWindowSort left in
	// scratch instead of moving the refs: the i-th entry is
	// refs[order[i]&orderMask] (at).
	order []uint64
	// orderMask is the bits of an order item that are the ref's index.
	orderMask uint64
	// counts is keyWindowSort's bucket counting array, reused.
	counts []int
	// blk and spillOut are writeRun's buffers (gathered refs, encoded
	// entries), allocated at the first spill and reused.
	blk      []runRef
	spillOut []byte
	extra    int64 // memory held beside the buffer (the worker's aggregate partials)
	used     int64 // bytes of the entries in the arena
}

// charge is the memory the buffer holds.
func (b *runBuffer) charge() int64 {
	n := int64(len(b.blocks))*int64(b.block) + int64(max(cap(b.refs)*(refBytes+sortScratchBytes), len(b.scratch)*8)) + b.extra
	for _, x := range b.big {
		n += int64(cap(x))
	}
	return n
}

// full reports whether adding an entry of extra arena bytes
// (recordBytes) would take the buffer past its limit: its refs are full, or a block would have to be
// added.
func (b *runBuffer) full(extra int) bool {
	if len(b.refs) == 0 {
		return false
	}
	if len(b.refs) == cap(b.refs) {
		return true
	}
	needBlock := extra > 0 && (b.cur >= len(b.blocks) || len(b.blocks[b.cur])+extra > b.block)
	if needBlock && b.cur+1 >= len(b.blocks) && b.charge()+int64(b.block) > b.limit {
		return true
	}
	return b.charge() > b.limit // the aggregate partials beside it grew
}

// planRefs sizes the refs for the next run: they are allocated once at a
// fixed capacity (growing them by append would leave old arrays to the
// collector, beyond the budget), which splits the limit between refs and
// arena blocks by the average size of the entries of the last run (32 bytes
// before the first).
func (b *runBuffer) planRefs() {
	avg := int64(8)
	if len(b.refs) > 0 {
		avg = b.used / int64(len(b.refs))
	}
	want := max((b.limit-b.extra)/(refBytes+sortScratchBytes+avg), 64)
	if c := int64(cap(b.refs)); c == 0 || 4*want < 3*c || 3*want > 4*c {
		b.refs = make([]runRef, 0, want)
		b.scratch = nil
	}
}

// refOnly reports whether an entry is held whole by its ref (no record).
func refOnly(key []byte, row, n int64, cover []byte) bool {
	return len(key) <= shortKeys && len(cover) == 0 && uint64(row) <= maxRefRow && uint64(n) <= maxRefRow
}

// recordBytes is the arena bytes an entry takes (0 when its ref holds it).
func recordBytes(key []byte, row, n int64, cover []byte) int {
	if refOnly(key, row, n, cover) {
		return 0
	}
	return recordSize(key, row, n, cover)
}

// add appends an entry.
func (b *runBuffer) add(bucket int32, key []byte, file, rg int32, row, n int64, cover []byte) {
	if cap(b.refs) == 0 {
		b.planRefs()
	}
	off := noRecord
	if !refOnly(key, row, n, cover) {
		total := recordSize(key, row, n, cover)
		b.used += int64(total)
		var dst []byte
		if total > b.block {
			dst = make([]byte, 0, total)
			off = bigRef | len(b.big)
		} else {
			if b.cur < len(b.blocks) && len(b.blocks[b.cur])+total > b.block {
				b.cur++
			}
			if b.cur == len(b.blocks) {
				b.blocks = append(b.blocks, make([]byte, 0, b.block))
			}
			dst = b.blocks[b.cur]
			off = b.cur*b.block + len(dst)
		}
		if len(key) > shortKeys {
			off |= slowRef
		}
		dst = appendRecord(dst, key, file, rg, row, n, cover)
		if total > b.block {
			b.big = append(b.big, dst)
		} else {
			b.blocks[b.cur] = dst
		}
	}
	b.refs = append(b.refs, runRef{w: refWords(bucket, key, file, rg, row), off: uint32(off), n: uint32(n)})
}

// refWords packs an entry's order into a runRef's words (see runRef).
func refWords(bucket int32, key []byte, file, rg int32, row int64) [3]uint64 {
	var p [8]byte
	tag := byte(0)
	if len(key) > 0 {
		tag = key[0]
		copy(p[:], key[1:])
	}
	prefix := binary.BigEndian.Uint64(p[:])
	return [3]uint64{
		uint64(uint16(bucket))<<48 | uint64(tag)<<40 | prefix>>24,
		prefix<<40 | uint64(min(len(key), shortKeys+1))<<32 | uint64(uint32(file)^1<<31),
		uint64(uint32(rg)^1<<31)<<32 | uint64(uint32(row)),
	}
}

// entry fills e with the entry r refers to; a ref that holds its entry
// whole writes the key into kbuf, which e.Key then aliases.
func (b *runBuffer) entry(r runRef, e *entry, kbuf *[shortKeys]byte) error {
	if r.off != noRecord {
		if err := decodeRecord(b.record(r), e); err != nil {
			return err
		}
		e.Bucket = r.bucket()
		return nil
	}
	l := int(r.keyLen())
	kbuf[0] = byte(r.w[0] >> 40)
	binary.BigEndian.PutUint64(kbuf[1:], r.w[0]<<24|r.w[1]>>40)
	*e = entry{Bucket: r.bucket(), Key: kbuf[:l:l], File: r.file(), RG: r.rg(), Row: int64(r.row()), N: int64(r.n)}
	return nil
}

// recordSize is the size of an encoded entry with its length prefix.
func recordSize(key []byte, row, n int64, cover []byte) int {
	rest := uvarintLen(uint64(len(key))) + len(key) + 8 + uvarintLen(uint64(row)) + uvarintLen(uint64(n)) +
		uvarintLen(uint64(len(cover))) + len(cover)
	return uvarintLen(uint64(rest)) + rest
}

// appendRecord appends an encoded entry with its length prefix.
func appendRecord(dst, key []byte, file, rg int32, row, n int64, cover []byte) []byte {
	rest := uvarintLen(uint64(len(key))) + len(key) + 8 + uvarintLen(uint64(row)) + uvarintLen(uint64(n)) +
		uvarintLen(uint64(len(cover))) + len(cover)
	dst = binary.AppendUvarint(dst, uint64(rest))
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(file))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(rg))
	dst = binary.AppendUvarint(dst, uint64(row))
	dst = binary.AppendUvarint(dst, uint64(n))
	dst = binary.AppendUvarint(dst, uint64(len(cover)))
	return append(dst, cover...)
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// record returns the encoded entry (without its length) that r points to.
func (b *runBuffer) record(r runRef) []byte {
	var src []byte
	var at int
	off := int(r.off &^ slowRef)
	if off&bigRef != 0 {
		src = b.big[off&^bigRef]
	} else {
		src, at = b.blocks[off/b.block], off%b.block
	}
	l, n := binary.Uvarint(src[at:])
	return src[at+n : at+n+int(l)]
}

// sort orders the buffer's entries in fragment order (read them with
// at): by keyWindowSort when it applies (the common case), else by
// radixSort.
func (b *runBuffer) sort() {
	b.order = nil
	if !b.keyWindowSort() {
		b.radixSort(b.refs, 0)
	}
}

// at returns the i-th entry of a sorted buffer.
func (b *runBuffer) at(i int) runRef {
	if b.order != nil {
		return b.refs[b.order[i]&b.orderMask]
	}
	return b.refs[i]
}

// gatherBlock is how many sorted refs gather copies at a time (32 KiB).
const gatherBlock = 1024

// gather copies the sorted entries from the i-th on, at most len(dst) of
// them, into dst and returns them. Its loop does nothing but the loads, so
// that the processor has many of the (cache-missing) reads of refs in
// order in flight at once; reading them one by one between the work on
// each entry had them one after another, as slow as moving the refs.
func (b *runBuffer) gather(dst []runRef, i int) []runRef {
	n := min(len(dst), len(b.refs)-i)
	dst = dst[:n]
	if b.order == nil {
		copy(dst, b.refs[i:])
		return dst
	}
	order := b.order[i : i+n]
	for j, o := range order {
		dst[j] = b.refs[o&b.orderMask]
	}
	return dst
}

// sortScratchBytes is the memory per ref that keyWindowSort needs beside
// the refs (two uint64 per ref), charged to the buffer (charge, planRefs)
// so that a build within its budget stays within it while sorting.
const sortScratchBytes = 16

// keyWindowMin is the smallest buffer keyWindowSort handles (below it the
// radix sort is as fast and needs no scratch).
const keyWindowMin = 1024

// keyWindowSort sorts the refs by a stable LSD radix sort of windows of
// their keys, when that gives fragment order, and reports whether it did.
// It applies when
//
//   - every ref holds its entry whole (short keys, no cover, no aggregate
//     record), so the order is that of the words (w[0], w[1], w[2]);
//   - the refs are already in (file, rg, row) order as added, which is how
//     a scanning worker adds them (its files in increasing id, row groups
//     and rows in order): then equal keys need no tie-break digits, since a
//     stable sort by key keeps them in that order;
//   - the bits in which the refs' keys differ span at most 32 bits in the
//     key proper (tag, key bytes, length: the low 48 bits of w[0] and the
//     top half of w[1]) — an int key of an id column varies in its low
//     three or four bytes — and the bucket (the top 16 bits of w[0]) is a
//     second window of its own. The order of two refs is then the order of
//     (bucket window, key window): bits outside the windows are the same in
//     every ref. So hash row indexes (whose buckets make the whole key span
//     wider than 64 bits) sort this way too.
//
// Each entry is sorted as one uint64 by 11-bit digits: (bucket window, key
// window, index) when the three fit in 64 bits (a hash row index's 16
// bucket bits, ≈20 key bits and ≈21 index bits do), else (key window << 32
// | index) first and then, when buckets differ, the bucket window gathered
// from the refs in the key-sorted order —
// where the in-place radix sort swaps 32-byte refs at random and settles
// every run of equal keys on file, row-group and row digits (the top key of
// an arrival-order lake is a fifth of its entries). The refs are not moved:
// the sorted items are left as b.order, and the run is read through them
// (at). Permuting the refs in place followed each cycle from ref to ref, two
// dependent cache misses per entry (≈60 % of the sort's time); reading
// them in order through the items issues independent loads instead.
func (b *runBuffer) keyWindowSort() bool {
	refs := b.refs
	n := len(refs)
	if n < keyWindowMin || n >= 1<<32 {
		return false
	}
	f := refs[0]
	var x0, x1 uint64 // bits in which keys differ from the first's
	prevFile, prevPos := uint32(f.w[1]), f.w[2]
	for _, r := range refs {
		if r.off != noRecord {
			return false
		}
		x0 |= r.w[0] ^ f.w[0]
		x1 |= (r.w[1] ^ f.w[1]) >> 32
		file := uint32(r.w[1])
		if file < prevFile || file == prevFile && r.w[2] < prevPos {
			return false // not in (file, rg, row) order
		}
		prevFile, prevPos = file, r.w[2]
	}
	xb := x0 >> 48 // bucket bits that differ
	x0 &= 1<<48 - 1
	if xb == 0 && x0 == 0 && x1 == 0 {
		return true // one key: already in order
	}
	// The 80-bit key proper is (w[0] & (1<<48-1)):(w[1]>>32); lo and hi
	// are the lowest and highest bits in which keys differ.
	lo, hi := 0, -1
	switch {
	case x1 != 0:
		lo = bits.TrailingZeros64(x1)
	case x0 != 0:
		lo = 32 + bits.TrailingZeros64(x0)
	}
	switch {
	case x0 != 0:
		hi = 32 + 63 - bits.LeadingZeros64(x0)
	case x1 != 0:
		hi = 63 - bits.LeadingZeros64(x1)
	}
	if hi-lo >= 32 {
		return false
	}
	if cap(b.scratch) < 2*n {
		b.scratch = make([]uint64, 2*cap(refs))
	}
	items, tmp := b.scratch[:n], b.scratch[n:2*n]
	kw := 0 // key window width
	if hi >= lo {
		kw = hi - lo + 1
	}
	keyWindow := func(r runRef) uint64 {
		if kw == 0 {
			return 0
		}
		var k uint32
		if lo >= 32 {
			k = uint32(r.w[0] >> (lo - 32))
		} else {
			k = uint32((r.w[1]>>32)>>lo | r.w[0]<<(32-lo))
		}
		return uint64(k & windowMask(kw))
	}
	blo, bw := 0, 0 // bucket window
	if xb != 0 {
		blo = bits.TrailingZeros64(xb)
		bw = 64 - bits.LeadingZeros64(xb) - blo
	}
	if ib := bits.Len(uint(n - 1)); bw > 0 && ib+bw+kw <= 64 {
		// Bucket and key windows side by side above the index, in one
		// item: one sort by both, reading the refs once in order (a second
		// sort by bucket gathered each ref's bucket at random, a cache miss
		// per entry, ≈5 % of a hash build).
		for i, r := range refs {
			bk := r.w[0] >> (48 + blo) & uint64(windowMask(bw))
			items[i] = (bk<<kw|keyWindow(r))<<ib | uint64(i)
		}
		items, _ = windowPassesFrom(items, tmp, ib, bw+kw)
		b.order, b.orderMask = items, uint64(1)<<ib-1
		return true
	}
	if bw > 0 {
		// Too wide for one item (an id key hashed over 32 bits): a
		// counting sort by bucket window, reading the refs in order, then
		// each bucket's items (key window << 32 | index) sorted on their
		// own, small ranges in cache. (Sorting by key and then stably by
		// bucket gathered each ref's bucket at random, a cache miss per
		// entry.) A hot key's bucket is already in order: its items differ
		// only in their ascending index.
		nb := 1 << bw
		if cap(b.counts) < nb+1 {
			b.counts = make([]int, nb+1)
		}
		counts := b.counts[:nb+1]
		clear(counts)
		bucketWindow := func(r runRef) uint64 { return r.w[0] >> (48 + blo) & uint64(windowMask(bw)) }
		for _, r := range refs {
			counts[bucketWindow(r)+1]++
		}
		for i := 1; i <= nb; i++ {
			counts[i] += counts[i-1]
		}
		for i, r := range refs {
			k := bucketWindow(r)
			items[counts[k]] = keyWindow(r)<<32 | uint64(i)
			counts[k]++
		}
		// counts[k] is now the end of bucket k.
		start := 0
		for _, end := range counts[:nb] {
			if end-start > 1 {
				slices.Sort(items[start:end])
			}
			start = end
		}
	} else {
		for i, r := range refs {
			items[i] = keyWindow(r)<<32 | uint64(i)
		}
		items, _ = windowPasses(items, tmp, kw)
	}
	b.orderMask = 1<<32 - 1
	b.order = items
	return true
}

// windowMask is the mask of a window of width bits (1 to 32).
func windowMask(width int) uint32 { return uint32(uint64(1)<<width - 1) }

// windowPasses sorts items (window << 32 | index, window of width bits)
// stably by their windows, in 11-bit LSD passes between items and tmp, and
// returns the sorted slice and the other.
func windowPasses(items, tmp []uint64, width int) ([]uint64, []uint64) {
	return windowPassesFrom(items, tmp, 32, width)
}

// windowPassesFrom sorts items stably by their bits from bit lo on, width
// bits of them (at most 64-lo), in 11-bit LSD passes between items and
// tmp, and returns the sorted slice and the other. Bits above lo+width must
// be zero.
func windowPassesFrom(items, tmp []uint64, lo, width int) ([]uint64, []uint64) {
	n := len(items)
	var count [1 << 11]int
	for shift := lo; shift < lo+width; shift += 11 {
		clear(count[:])
		for _, it := range items {
			count[it>>shift&0x7ff]++
		}
		if count[items[0]>>shift&0x7ff] == n {
			continue // every entry shares this digit
		}
		sum := 0
		for d := range count {
			count[d], sum = sum, sum+count[d]
		}
		for _, it := range items {
			d := it >> shift & 0x7ff
			tmp[count[d]] = it
			count[d]++
		}
		items, tmp = tmp, items
	}
	return items, tmp
}

// refDigits is the number of byte digits of a runRef's sort key that
// radixSort partitions on: the bucket and tag (3 bytes of hi), the
// prefix (8), the key length (1, long keys as one value), then, for keys of
// at most shortKeys bytes, the file and row group (4 each, sign bit
// flipped) and the row (4).
const (
	refDigits    = 24
	refKeyDigits = 12 // digits up to the key length
)

// refDigit returns digit d (0 most significant) of r's sort key, the order
// of compareRefs up to its tie-breaks: keys longer than shortKeys share one
// length digit, since compareRefs orders them by their bytes, not length,
// and their digits past refKeyDigits do not apply.
func refDigit(r runRef, d int) byte { return byte(r.w[d>>3] >> (56 - 8*(d&7))) }

// firstVaryingDigit returns the first digit from d on (refDigit) in which
// some refs differ, refDigits if none, or refKeyDigits when the keys are
// longer than shortKeys and every key digit is shared.
func firstVaryingDigit(refs []runRef, d int) int {
	f := refs[0]
	var x [3]uint64
	for _, r := range refs[1:] {
		x[0] |= r.w[0] ^ f.w[0]
		x[1] |= r.w[1] ^ f.w[1]
		x[2] |= r.w[2] ^ f.w[2]
	}
	for ; d < refDigits; d++ {
		if d == refKeyDigits && f.keyLen() > shortKeys {
			return d
		}
		if byte(x[d>>3]>>(56-8*(d&7))) != 0 {
			return d
		}
	}
	return d
}

// radixSortCutoff is the range below which radixSort hands over to a
// comparison sort.
const radixSortCutoff = 64

// radixSort sorts refs in fragment order (compareRefs) in place: an
// American-flag (in-place MSD) radix sort on the refs' leading sort-key
// bytes, skipping digits every ref of a range shares (an int key varies in
// two or three of its eight bytes), with compareRefs settling what the
// digits leave equal and ranges under radixSortCutoff. It needs no memory
// beyond the refs (the build's budget holds them), and for the ≈10⁷ entries
// of a large build it is several times faster than a comparison sort.
func (b *runBuffer) radixSort(refs []runRef, d int) {
	for {
		if len(refs) < radixSortCutoff || d >= refDigits || d == refKeyDigits && refs[0].keyLen() > shortKeys {
			slices.SortFunc(refs, b.compareRefs)
			return
		}
		var count [256]int
		for _, r := range refs {
			count[refDigit(r, d)]++
		}
		if count[refDigit(refs[0], d)] == len(refs) {
			// Every ref shares this digit: skip it and every next digit
			// they share, found in one pass (an int key varies in two or
			// three of its eight bytes, a file id in one of four).
			d = firstVaryingDigit(refs, d+1)
			continue
		}
		var start, next [256]int
		sum := 0
		for i := range count {
			start[i], next[i] = sum, sum
			sum += count[i]
		}
		for i := range count {
			end := start[i] + count[i]
			for next[i] < end {
				r := refs[next[i]]
				k := int(refDigit(r, d))
				for k != i {
					refs[next[k]], r = r, refs[next[k]]
					next[k]++
					k = int(refDigit(r, d))
				}
				refs[next[i]] = r
				next[i]++
			}
		}
		for i := range count {
			if count[i] > 1 {
				b.radixSort(refs[start[i]:start[i]+count[i]], d+1)
			}
		}
		return
	}
}

// reset empties the buffer, keeping its blocks and refs for reuse (refs
// resized to the entries seen).
func (b *runBuffer) reset() {
	b.planRefs()
	for i := range b.blocks {
		b.blocks[i] = b.blocks[i][:0]
	}
	b.cur = 0
	b.refs = b.refs[:0]
	b.order = nil
	b.big = nil
	b.used = 0
}

// trim releases blocks and refs of an empty buffer until its charge is
// within its limit.
func (b *runBuffer) trim() {
	if len(b.refs) > 0 {
		return
	}
	for b.charge() > b.limit && len(b.blocks) > 0 {
		b.blocks = b.blocks[:len(b.blocks)-1]
	}
	if b.charge() > b.limit {
		b.refs, b.scratch, b.order = nil, nil, nil
	}
}

// decodeRecord parses an encoded entry (without its length prefix) into e;
// Key and Cover alias rec.
func decodeRecord(rec []byte, e *entry) error {
	kl, n := binary.Uvarint(rec)
	if n <= 0 || uint64(len(rec)-n) < kl+8 {
		return errBadRecord
	}
	rec = rec[n:]
	e.Key, rec = rec[:kl:kl], rec[kl:]
	e.File = int32(binary.LittleEndian.Uint32(rec))
	e.RG = int32(binary.LittleEndian.Uint32(rec[4:]))
	rec = rec[8:]
	row, n1 := binary.Uvarint(rec)
	if n1 <= 0 {
		return errBadRecord
	}
	rec = rec[n1:]
	cnt, n2 := binary.Uvarint(rec)
	if n2 <= 0 {
		return errBadRecord
	}
	rec = rec[n2:]
	cl, n3 := binary.Uvarint(rec)
	if n3 <= 0 || uint64(len(rec)-n3) != cl {
		return errBadRecord
	}
	e.Row, e.N = int64(row), int64(cnt)
	e.Cover = rec[n3 : n3+int(cl) : n3+int(cl)]
	return nil
}

var errBadRecord = errors.New("rowindex: corrupt spilled entry")

// spillDir owns the temporary files of one build. It is safe for
// concurrent use.
type spillDir struct {
	dir  string
	next atomic.Int64
}

func newSpillDir(parent string) (*spillDir, error) {
	// Named after this process: a killed build's folder is removed by the
	// next update once the process is gone (proc.SpillPattern).
	dir, err := os.MkdirTemp(parent, proc.SpillPattern("rowindex"))
	if err != nil {
		return nil, fmt.Errorf("rowindex: build spill folder: %w", err)
	}
	return &spillDir{dir: dir}, nil
}

// create makes a new temporary file.
func (d *spillDir) create(kind string) (*os.File, error) {
	return os.Create(filepath.Join(d.dir, fmt.Sprintf("%s-%06d", kind, d.next.Add(1))))
}

func (d *spillDir) remove() error { return os.RemoveAll(d.dir) }

// runWriteBuffer is the buffer of a run file being written.
const runWriteBuffer = 256 << 10

// runWriter writes a run file: per entry the bucket (uint16, big endian)
// and the encoded entry.
type runWriter struct {
	w   *bufio.Writer
	n   int64
	buf []byte
}

func newRunWriter(f *os.File) *runWriter {
	return &runWriter{w: bufio.NewWriterSize(f, runWriteBuffer)}
}

// writeEncoded writes an encoded entry (without its length prefix).
func (rw *runWriter) writeEncoded(bucket int32, rec []byte) error {
	rw.buf = binary.BigEndian.AppendUint16(rw.buf[:0], uint16(bucket))
	rw.buf = binary.AppendUvarint(rw.buf, uint64(len(rec)))
	rw.w.Write(rw.buf)
	_, err := rw.w.Write(rec)
	rw.n += int64(len(rw.buf) + len(rec))
	return err
}

// writeEntry writes an entry.
func (rw *runWriter) writeEntry(e *entry) error {
	if refOnly(e.Key, e.Row, e.N, e.Cover) {
		rw.buf = appendRefRecord(rw.buf[:0], runRef{w: refWords(e.Bucket, e.Key, e.File, e.RG, e.Row), n: uint32(e.N)})
	} else {
		rw.buf = binary.BigEndian.AppendUint16(rw.buf[:0], uint16(e.Bucket))
		rw.buf = appendRecord(rw.buf, e.Key, e.File, e.RG, e.Row, e.N, e.Cover)
	}
	_, err := rw.w.Write(rw.buf)
	rw.n += int64(len(rw.buf))
	return err
}

func (rw *runWriter) flush() error { return rw.w.Flush() }

// writeRun writes a sorted buffer to f and returns the bytes written.
func writeRun(f *os.File, b *runBuffer) (int64, error) {
	// Entries are encoded into one buffer and written a buffer at a time;
	// a ref that holds its entry whole is encoded straight from its words
	// (through an entry and a bufio.Writer per entry this was ≈12 % of a
	// build's CPU). The bytes are runWriter's.
	// Both buffers are the runBuffer's, kept from one spill to the next
	// (a worker spills many times; new ones each time were garbage beyond
	// the budget).
	if b.spillOut == nil {
		b.spillOut = make([]byte, 0, spillOutBytes+spillOutBytes/4)
	}
	out := b.spillOut[:0]
	defer func() { b.spillOut = out[:0] }()
	var written int64
	flush := func() error {
		_, err := f.Write(out)
		written += int64(len(out))
		out = out[:0]
		return err
	}
	if b.order != nil && b.blk == nil {
		b.blk = make([]runRef, gatherBlock)
	}
	blk := b.blk
	for i := 0; i < len(b.refs); {
		rs := b.refs[i:min(i+gatherBlock, len(b.refs))]
		if b.order != nil {
			rs = b.gather(blk, i)
		}
		i += len(rs)
		for _, r := range rs {
			if r.off != noRecord {
				rec := b.record(r)
				out = binary.BigEndian.AppendUint16(out, uint16(r.bucket()))
				out = binary.AppendUvarint(out, uint64(len(rec)))
				out = append(out, rec...)
			} else {
				out = appendRefRecord(out, r)
			}
			if len(out) >= spillOutBytes {
				if err := flush(); err != nil {
					return written, err
				}
			}
		}
	}
	if len(out) > 0 {
		if err := flush(); err != nil {
			return written, err
		}
	}
	return written, nil
}

// spillOutBytes is the size at which writeRun writes its buffer out.
const spillOutBytes = 64 << 10

// A run-file record of an entry that a ref holds whole (refOnly) is its
// ref: the bucket (uint16, big endian), refMark where the length of an
// encoded entry would be (no encoded entry has length 0), the ref's words
// (little endian; the first without its top 16 bits, the bucket) and the
// run length (uvarint): ≈26 bytes, an encoded entry of an int key ≈24.
// Writing and reading it copies integers, where the encoded entry took a
// varint per field both ways and the merger packed the words again from
// the parsed entry.
const (
	refMark = 0
	// refFixedBytes is a ref record's bytes before the run length.
	refFixedBytes = 2 + 1 + 6 + 8 + 8
)

// appendRefRecord appends the run-file record of a ref that holds its
// entry whole.
func appendRefRecord(out []byte, r runRef) []byte {
	out = binary.BigEndian.AppendUint16(out, uint16(r.bucket()))
	out = append(out, refMark)
	out = binary.LittleEndian.AppendUint32(out, uint32(r.w[0]))
	out = binary.LittleEndian.AppendUint16(out, uint16(r.w[0]>>32))
	out = binary.LittleEndian.AppendUint64(out, r.w[1])
	out = binary.LittleEndian.AppendUint64(out, r.w[2])
	return binary.AppendUvarint(out, uint64(r.n))
}

// parseRefRecord fills e (its key in kbuf) and w from a ref record's first
// refFixedBytes (b) and its run length.
func parseRefRecord(b []byte, n uint64, e *entry, w *[3]uint64, kbuf *[shortKeys]byte) error {
	_ = b[refFixedBytes-1]
	w0 := uint64(binary.BigEndian.Uint16(b))<<48 | uint64(binary.LittleEndian.Uint16(b[7:]))<<32 | uint64(binary.LittleEndian.Uint32(b[3:]))
	r := runRef{w: [3]uint64{w0, binary.LittleEndian.Uint64(b[9:]), binary.LittleEndian.Uint64(b[17:])}, off: noRecord, n: uint32(n)}
	if r.keyLen() > shortKeys || n > maxRefRow {
		return errBadRecord
	}
	*w = r.w
	l := int(r.keyLen())
	kbuf[0] = byte(r.w[0] >> 40)
	binary.BigEndian.PutUint64(kbuf[1:], r.w[0]<<24|r.w[1]>>40)
	*e = entry{Bucket: r.bucket(), Key: kbuf[:l:l], File: r.file(), RG: r.rg(), Row: int64(r.row()), N: int64(r.n)}
	return nil
}

// entrySource yields entries in fragment order. The entry returned by next
// is valid until the following call.
type entrySource interface {
	next() (*entry, error) // io.EOF at the end
	close() error
}

// wordSource is an entrySource that has, for an entry a ref holds whole
// (refOnly), its order packed as a runRef's words at hand: the merger
// compares those without packing them again from the entry.
type wordSource interface {
	// headWords returns the words of the entry next returned last, when
	// it is one a ref holds whole.
	headWords() (*[3]uint64, bool)
}

// memRun is a sorted runBuffer read in place (a block at a time through
// gather when its order is not the refs').
type memRun struct {
	b    *runBuffer
	i    int
	blk  []runRef // gathered refs from i-len(blk)+j on
	j    int
	e    entry
	kbuf [shortKeys]byte
	// w are the words of the last entry, when its ref holds it whole.
	w     [3]uint64
	whole bool
}

func (m *memRun) next() (*entry, error) {
	var r runRef
	if m.b.order == nil {
		if m.i >= len(m.b.refs) {
			return nil, io.EOF
		}
		r = m.b.refs[m.i]
		m.i++
	} else {
		if m.j >= len(m.blk) {
			if m.i >= len(m.b.refs) {
				return nil, io.EOF
			}
			if m.blk == nil {
				m.blk = make([]runRef, gatherBlock)
			}
			m.blk = m.b.gather(m.blk[:cap(m.blk)], m.i)
			m.i += len(m.blk)
			m.j = 0
		}
		r = m.blk[m.j]
		m.j++
	}
	if err := m.b.entry(r, &m.e, &m.kbuf); err != nil {
		return nil, err
	}
	m.w, m.whole = r.w, r.off == noRecord
	return &m.e, nil
}

func (m *memRun) headWords() (*[3]uint64, bool) { return &m.w, m.whole }

func (m *memRun) close() error { return nil }

// fileRun reads a run file.
type fileRun struct {
	f   *os.File
	r   *bufio.Reader
	buf []byte
	e   entry
	// win is the read buffer's bytes (a Peek of all of them), of which
	// the first used are parsed, discarded from r only when win runs out:
	// a Peek and a Discard per entry were ≈5 % of a build.
	win  []byte
	used int
	// the last entry's words and key, when it was a ref record
	w     [3]uint64
	whole bool
	kbuf  [shortKeys]byte
}

func (fr *fileRun) headWords() (*[3]uint64, bool) { return &fr.w, fr.whole }

func openRun(path string, bufSize int) (*fileRun, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return &fileRun{f: f, r: bufio.NewReaderSize(f, bufSize)}, nil
}

func (fr *fileRun) next() (*entry, error) {
	// The entry is parsed in place from the read buffer (it stays valid
	// until the following call, which is all entrySource promises);
	// io.ReadFull and ReadUvarint a byte at a time cost ≈10 % of a build.
	if e, ok, err := fr.nextInPlace(); ok || err != nil {
		return e, err
	}
	fr.r.Discard(fr.used)
	fr.win, fr.used = nil, 0
	fr.win, _ = fr.r.Peek(fr.r.Size()) // what the file has left, up to a buffer
	if e, ok, err := fr.nextInPlace(); ok || err != nil {
		return e, err
	}
	// At the end, or an entry larger than the buffer.
	fr.win = nil
	head, err := fr.r.Peek(2 + binary.MaxVarintLen64)
	if len(head) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	if len(head) < 3 {
		return nil, fmt.Errorf("rowindex: reading spilled run: %w", io.ErrUnexpectedEOF)
	}
	if head[2] == refMark {
		var b [refFixedBytes]byte
		if _, err := io.ReadFull(fr.r, b[:]); err != nil {
			return nil, fmt.Errorf("rowindex: reading spilled run: %w", io.ErrUnexpectedEOF)
		}
		n, err := binary.ReadUvarint(fr.r)
		if err != nil {
			return nil, fmt.Errorf("rowindex: reading spilled run: %w", io.ErrUnexpectedEOF)
		}
		if err := parseRefRecord(b[:], n, &fr.e, &fr.w, &fr.kbuf); err != nil {
			return nil, err
		}
		fr.whole = true
		return &fr.e, nil
	}
	fr.whole = false
	l, n := binary.Uvarint(head[2:])
	if n <= 0 || l > math.MaxInt32 {
		return nil, errBadRecord
	}
	bucket := int32(binary.BigEndian.Uint16(head))
	total := 2 + n + int(l)
	var rec []byte
	if total <= fr.r.Size() {
		b, err := fr.r.Peek(total)
		if err != nil {
			return nil, fmt.Errorf("rowindex: reading spilled run: %w", io.ErrUnexpectedEOF)
		}
		rec = b[2+n:]
		defer fr.r.Discard(total)
	} else {
		fr.r.Discard(2 + n)
		if cap(fr.buf) < int(l) {
			fr.buf = make([]byte, l)
		}
		fr.buf = fr.buf[:l]
		if _, err := io.ReadFull(fr.r, fr.buf); err != nil {
			return nil, fmt.Errorf("rowindex: reading spilled run: %w", err)
		}
		rec = fr.buf
	}
	if err := decodeRecord(rec, &fr.e); err != nil {
		return nil, err
	}
	fr.e.Bucket = bucket
	return &fr.e, nil
}

// nextInPlace parses the next entry from win, if win holds it whole.
func (fr *fileRun) nextInPlace() (*entry, bool, error) {
	b := fr.win[fr.used:]
	if len(b) < 3 {
		return nil, false, nil
	}
	if b[2] == refMark {
		if len(b) <= refFixedBytes {
			return nil, false, nil
		}
		n, m := binary.Uvarint(b[refFixedBytes:])
		if m == 0 {
			return nil, false, nil // the run length is cut by the window's end
		}
		if m < 0 {
			return nil, false, errBadRecord
		}
		if err := parseRefRecord(b, n, &fr.e, &fr.w, &fr.kbuf); err != nil {
			return nil, false, err
		}
		fr.whole = true
		fr.used += refFixedBytes + m
		return &fr.e, true, nil
	}
	fr.whole = false
	l, n := binary.Uvarint(b[2:])
	if n == 0 {
		return nil, false, nil // the length is cut by the window's end
	}
	if n < 0 || l > math.MaxInt32 {
		return nil, false, errBadRecord
	}
	total := 2 + n + int(l)
	if total > len(b) {
		return nil, false, nil
	}
	if err := decodeRecord(b[2+n:total], &fr.e); err != nil {
		return nil, false, err
	}
	fr.e.Bucket = int32(binary.BigEndian.Uint16(b))
	fr.used += total
	return &fr.e, true, nil
}

func (fr *fileRun) close() error { return fr.f.Close() }

// merger merges sources in fragment order with a loser tree: each of the
// k-1 inner nodes holds the source that lost the match played there, so
// advancing the winner replays only its path to the root, ⌈log2 k⌉
// comparisons (a binary heap's sift-down makes about twice that, each
// through an interface call). Equal entries (aggregate partials of one key
// and file spilled in pieces) come out in source order.
type merger struct {
	srcs  []entrySource
	heads []*entry // nil: the source is exhausted
	// words are each head's order packed as a runRef's words (packHead),
	// valid when the key is short: such heads compare by three integers.
	words [][3]uint64
	short []bool
	// ws are the sources that give their head's words (nil: not one).
	ws   []wordSource
	tree []int // tree[0] the winner, tree[1:] the losers of the inner nodes
	last int   // source whose head was returned last (-1: none)
}

// packHead sets source i's packed words from its head.
func (m *merger) packHead(i int) {
	e := m.heads[i]
	if ws := m.ws[i]; ws != nil && e != nil {
		if w, ok := ws.headWords(); ok {
			m.words[i], m.short[i] = *w, true
			return
		}
	}
	if e == nil || len(e.Key) > shortKeys || uint64(e.Row) > maxRefRow {
		m.short[i] = false
		return
	}
	m.words[i] = refWords(e.Bucket, e.Key, e.File, e.RG, e.Row)
	m.short[i] = true
}

func newMerger(srcs []entrySource) (*merger, error) {
	k := len(srcs)
	m := &merger{srcs: srcs, heads: make([]*entry, k), words: make([][3]uint64, k), short: make([]bool, k), ws: make([]wordSource, k), tree: make([]int, max(k, 1)), last: -1}
	for i, s := range srcs {
		m.ws[i], _ = s.(wordSource)
		e, err := s.next()
		if err == io.EOF {
			continue
		}
		if err != nil {
			return nil, err
		}
		m.heads[i] = e
		m.packHead(i)
	}
	if k > 0 {
		m.tree[0] = m.build(1)
	}
	return m, nil
}

// build plays the matches of the subtree at node (leaves k..2k-1 are the
// sources) and returns its winner.
func (m *merger) build(node int) int {
	k := len(m.srcs)
	if node >= k {
		return node - k
	}
	a, b := m.build(2*node), m.build(2*node+1)
	if m.less(b, a) {
		a, b = b, a
	}
	m.tree[node] = b
	return a
}

// less reports whether source a's head comes before source b's: an
// exhausted source comes last, equal heads in source order.
func (m *merger) less(a, b int) bool {
	x, y := m.heads[a], m.heads[b]
	if x == nil || y == nil {
		return y == nil && (x != nil || a < b)
	}
	if m.short[a] && m.short[b] {
		// The words order as (bucket, key, file, rg, row) do: a bucket
		// is 16 bits (bucketOf; 0 in a sorted row index).
		wa, wb := &m.words[a], &m.words[b]
		if wa[0] != wb[0] {
			return wa[0] < wb[0]
		}
		if wa[1] != wb[1] {
			return wa[1] < wb[1]
		}
		if wa[2] != wb[2] {
			return wa[2] < wb[2]
		}
		return a < b
	}
	if x.Bucket != y.Bucket {
		return x.Bucket < y.Bucket
	}
	if c := bytes.Compare(x.Key, y.Key); c != 0 {
		return c < 0
	}
	if x.File != y.File {
		return x.File < y.File
	}
	if x.RG != y.RG {
		return x.RG < y.RG
	}
	if x.Row != y.Row {
		return x.Row < y.Row
	}
	return a < b
}

// next returns the smallest head; it stays valid until the following call.
func (m *merger) next() (*entry, error) {
	k := len(m.srcs)
	if m.last >= 0 {
		// Advance the source returned last, now that its entry is
		// consumed, and replay its path.
		w := m.last
		m.last = -1
		e, err := m.srcs[w].next()
		switch {
		case err == io.EOF:
			m.heads[w] = nil
		case err != nil:
			return nil, err
		default:
			m.heads[w] = e
		}
		m.packHead(w)
		for node := (w + k) / 2; node >= 1; node /= 2 {
			if l := m.tree[node]; m.less(l, w) {
				m.tree[node], w = w, l
			}
		}
		m.tree[0] = w
	}
	if k == 0 || m.heads[m.tree[0]] == nil {
		return nil, io.EOF
	}
	m.last = m.tree[0]
	return m.heads[m.last], nil
}

func (m *merger) close() error {
	var errs []error
	for _, s := range m.srcs {
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}
