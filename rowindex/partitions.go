package rowindex

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/parquet-go/parquet-go/format"
)

// The build's partitioned key-id path, for int keys whose rows do not fit
// the budget at keyIDRowBytes (the key-id path's per-row ids): one scan
// writes a compact record (key value, row in its file) per row to one of P
// partitions, by bucket range under a hash row index (fragments are in
// bucket order) and by key range under a sorted one (bounds from the keys
// of the first row group decoded, a sample of the rows, so that partitions
// hold about as many rows). The partitions' records are blocks of one
// spill file (one file descriptor whatever P, so a low `ulimit -n` is no
// concern). Then, partition by partition in fragment order, the records
// are read once, in build row order: each key gets an id in a table as it
// first appears and each row becomes an (id, row) pair in memory, the
// keys are ranked in fragment order and the pairs counting-sorted by rank
// (a partition whose pairs would take more than onceShare allows, one of
// a few heavy keys, is read a second time to place its rows instead).
// Each partition's entries go to the one fragment writer as the key-id
// path's do (keyIDSource), so the writer sees one stream in fragment order
// and the fragments are the same bytes.
//
// Memory: a partition costs partPlaceBytes a row (its rows' places) and
// keyIDKeyBytes a key while it is sorted, and partPairBytes a row more
// when it is read once; P is chosen from the rows the
// first footer lets one expect so that an average partition takes at most
// half the budget even if every row had its own key. A partition's rows
// and distinct keys (estimated during the scan by linear counting) are
// checked against the budget before the first fragment is written; a
// build that does not fit, has a key other than int, or more than 2³²-1
// rows goes to the run path (errKeyIDsFull), as does one whose estimate
// proved wrong while sorting (its fragments are deleted first).

// partRecordBytes is one wide record of the partition file: the key
// value (encoded, as keyIDs.vals) and the row in its data file, little
// endian. A block whose keys share their high 32 bits (ids below 2³², the
// common case) is buffered and stored with partNarrowBytes a record: the
// key's low 32 bits and the row, the high bits once in the block's entry
// (a third less to buffer, write and read).
const (
	partRecordBytes = 12
	partNarrowBytes = 8
)

// partPlaceBytes is the memory of one row of the partition being sorted:
// its place in the sorted order.
const partPlaceBytes = 4

// Partition counts are powers of two between minPartitions and
// maxPartitions. The upper bound keeps the scan's buffers (workers × P ×
// the buffer) and the number of blocks small: 1,024 partitions hold 2³²
// rows at 4 M rows (16 MiB of places) each.
const (
	minPartitions = 2
	maxPartitions = 1024
)

// partBufferBytes is the most a scan worker buffers for one partition
// before writing it as a block (fewer when workers × P buffers would take
// more than an eighth of the budget; never under partMinBuffer). At 8
// workers and 128 partitions, 32 KiB buffers take 32 MiB.
const (
	partBufferBytes = 32 << 10
	partMinBuffer   = 4 << 10
)

// A partition's distinct keys are estimated during the scan by linear
// counting of a sample of them: the keys whose hash's top sketchSampleLog
// bits are 0 (1 in 16) set a bit of a bitmap of sketchBits, and
// 16 m ln(m/zeros) estimates the keys, within a few percent up to about
// 16 m ln m ≈ 1.1 M keys a partition; a full bitmap counts as a key per
// row. Sampling keeps the bitmaps (a worker's are P × 1 KiB) in cache and
// touches them for one row in 16.
const (
	sketchLog       = 13
	sketchBits      = 1 << sketchLog
	sketchSampleLog = 4
)

// partitions is the scan side of a partitioned key-id build: the partition
// file and what is known of the data files.
type partitions struct {
	kind    Kind
	hash    BucketHash // under a hash row index: partitions are bucket ranges
	limit   int64      // bytes a partition's places and keys may take
	tmp     *spillDir
	workers int
	bytes   atomic.Int64 // bytes written to partition files
	// onPartition, if set, is called as partition i starts being sorted
	// (tests stop a build there, or change the budget).
	onPartition func(p *partitions, i int)
	// grant is the memory the merge leaves the partition being sorted
	// (set by source).
	grant int64
	// twice lists the partitions whose records were read twice (the
	// merge's goroutine alone sets it).
	twice []int

	mu       sync.Mutex
	n        int         // partitions; 0 until the first file opens
	shift    uint        // hash: a key's partition is its hash >> shift
	bounds   []uint64    // sorted: partition p holds keys in [bounds[p-1], bounds[p])
	cuts     boundCells  // sorted: finds a key's place among bounds
	sampled  atomic.Bool // sorted: bounds are set
	bufBytes int
	parts    []partFile
	f        *os.File   // the partitions' blocks; nil until the first is written
	size     int64      // f's bytes
	rows     footerRows // rows reserved (files opened)
	fileRows []int64    // per data file in build order: its rows
	rgStarts [][]int64
	firstID  int32
	sketch   []uint64 // per partition sketchBits bits: the workers' sketches ORed
}

// partFile is one partition: blocks of records in the partition file,
// each written by one worker from one data file, rows increasing within a
// block.
type partFile struct {
	size   int64 // bytes of its blocks
	rows   int64
	blocks []partBlock
}

// partBlock is a block of n records of data file file at off; narrow
// ones (partNarrowBytes) have the keys' high 32 bits in hi.
type partBlock struct {
	off    int64
	file   int32
	n      int32
	hi     uint32
	narrow bool
}

// size is the block's bytes.
func (b *partBlock) size() int64 {
	if b.narrow {
		return int64(b.n) * partNarrowBytes
	}
	return int64(b.n) * partRecordBytes
}

func newPartitions(kind Kind, hash BucketHash, limit int64, tmp *spillDir, files, workers int) *partitions {
	return &partitions{kind: kind, hash: hash, limit: limit, tmp: tmp, workers: workers,
		fileRows: make([]int64, files), rgStarts: make([][]int64, files), rows: footerRows{files: files}}
}

// openFile reserves data file i (in build order), whose footer fe holds;
// class is its key class. The first file sets the number of partitions.
func (p *partitions) openFile(i int, fe *FileEntry, class KeyClass) error {
	if class != KeyInt {
		return errKeyIDsFull
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	est := p.rows.add(fe.Rows)
	if est > math.MaxUint32-1 {
		return errKeyIDsFull
	}
	if p.n == 0 {
		// An average partition within half the budget even at a key a row.
		per := max(p.limit/2/(partPlaceBytes+keyIDKeyBytes), 1)
		n := min(max(1<<bits.Len64(uint64(est/per)), minPartitions), maxPartitions)
		if est/int64(n)*partPlaceBytes > p.limit/2 {
			// Even the most partitions leave their rows over the budget.
			return errKeyIDsFull
		}
		p.n = n
		p.shift = uint(64 - bits.Len(uint(n-1)))
		p.parts = make([]partFile, n)
		p.sketch = make([]uint64, n*sketchBits/64)
		p.bufBytes = int(min(partBufferBytes, max(partMinBuffer, p.limit/8/int64(p.workers*n))))
		p.bufBytes -= p.bufBytes % partRecordBytes
	}
	p.fileRows[i] = fe.Rows
	p.rgStarts[i] = fe.RowGroupStarts
	p.firstID = fe.ID - int32(i)
	return nil
}

// sampleFooter sets a sorted build's key-range bounds from the footer of a
// data file whose row groups are in key order (each one's least key at or
// above the previous one's greatest, by their statistics; a file sorted by
// the key, as prepare writes): their least keys are the file's row
// quantiles, where the first row group's keys (sample) would put every
// bound below the rest of the file. Other files leave it to sample. The
// bounds only balance the partitions: any bounds give the same index.
func (p *partitions) sampleFooter(md *format.FileMetaData, col int) {
	if p.kind != KindSorted || p.sampled.Load() || len(md.RowGroups) < 2 {
		return
	}
	var mins []uint64
	var prevMax uint64
	for g := range md.RowGroups {
		if md.RowGroups[g].NumRows == 0 {
			continue
		}
		cm := &md.RowGroups[g].Columns[col].MetaData
		lo, ok1 := statKey(cm.Type, cm.Statistics.MinValue)
		hi, ok2 := statKey(cm.Type, cm.Statistics.MaxValue)
		if !ok1 || !ok2 || lo > hi || len(mins) > 0 && lo < prevMax {
			return
		}
		mins, prevMax = append(mins, lo), hi
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sampled.Load() || len(mins) < 2 {
		return
	}
	for q := 1; q < p.n; q++ {
		i := q * len(mins) / p.n
		if i == 0 {
			continue
		}
		if b := mins[i]; len(p.bounds) == 0 || b > p.bounds[len(p.bounds)-1] {
			p.bounds = append(p.bounds, b)
		}
	}
	p.cuts = newBoundCells(p.bounds)
	p.sampled.Store(true)
}

// statKey is an int key's value (encoded, as keyIDs.vals) from a plain
// INT32 or INT64 statistic, as the scan encodes the column's values.
func statKey(t format.Type, b []byte) (uint64, bool) {
	var i int64
	switch {
	case t == format.Int32 && len(b) == 4:
		i = int64(int32(binary.LittleEndian.Uint32(b)))
	case t == format.Int64 && len(b) == 8:
		i = int64(binary.LittleEndian.Uint64(b))
	default:
		return 0, false
	}
	return binary.BigEndian.Uint64(appendIntKey(nil, i)[1:]), true
}

// sample sets a sorted build's key-range bounds from the keys of the first
// row group decoded: the values at every n-th part of its rows, so that
// the partitions hold about as many rows if the group is like the rest.
// Equal bounds collapse, so a hot key is one partition's, never split.
func (p *partitions) sample(keys *intKeys, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sampled.Load() {
		return
	}
	var vs []uint64
	for r, v := range keys.vals[:n] {
		if !keys.null(r) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return // a group of null keys: the next one samples
	}
	slices.Sort(vs)
	for q := 1; q < p.n; q++ {
		b := vs[q*len(vs)/p.n]
		if len(p.bounds) == 0 || b > p.bounds[len(p.bounds)-1] {
			p.bounds = append(p.bounds, b)
		}
	}
	p.cuts = newBoundCells(p.bounds)
	p.sampled.Store(true)
}

// boundCells finds how many of a sorted build's partition bounds are at
// or below a key in about one step: the bounds' range is cut into cells of
// 2^shift values, about eight a bound, and at[j] counts the bounds below
// cell j, so a key's count is at[j] plus the few bounds in its own cell.
// The scan asks it for every row: a binary search of the bounds (7 steps,
// each a branch the keys of an arrival-order lake do not let the CPU
// predict, for 128 partitions) took ≈0.7 s of a partitioned sorted build
// of the 1 GB lake against ≈0.1 s for a hash build's intHash.
type boundCells struct {
	lo    uint64   // the least bound: cell 0's first value
	shift uint     // a cell holds 2^shift values
	at    []uint16 // at[j]: the bounds below cell j; len(at) = cells + 1
}

// boundCellsPerBound is about how many cells the table has a bound:
// a key's cell then rarely holds a bound at all unless bounds cluster.
const boundCellsPerBound = 8

// newBoundCells makes the cells of bounds (strictly increasing, fewer than
// maxPartitions).
func newBoundCells(bounds []uint64) boundCells {
	if len(bounds) == 0 {
		return boundCells{}
	}
	lo, span := bounds[0], bounds[len(bounds)-1]-bounds[0]
	log := bits.Len(uint(len(bounds) * boundCellsPerBound))
	shift := uint(max(0, bits.Len64(span)-log))
	at := make([]uint16, span>>shift+2)
	for _, b := range bounds {
		at[(b-lo)>>shift+1]++
	}
	for j := 1; j < len(at); j++ {
		at[j] += at[j-1]
	}
	return boundCells{lo: lo, shift: shift, at: at}
}

// count returns how many of bounds (those c was made of) are at or below
// v: the partition of key v.
func (c *boundCells) count(bounds []uint64, v uint64) int {
	if len(bounds) == 0 || v < c.lo {
		return 0
	}
	if v >= bounds[len(bounds)-1] {
		return len(bounds)
	}
	j := (v - c.lo) >> c.shift
	i, end := int(c.at[j]), int(c.at[j+1])
	if end-i > 8 {
		// Bounds that cluster (a run of hot keys): search the cell's.
		k, found := slices.BinarySearch(bounds[i:end], v)
		if found {
			k++
		}
		return i + k
	}
	for i < end && bounds[i] <= v {
		i++
	}
	return i
}

// write stores a block of records of data file file in partition i:
// narrow ones (partNarrowBytes) whose keys' high 32 bits are hi, or wide
// ones.
func (p *partitions) write(i, file int, rec []byte, narrow bool, hi uint32) error {
	blk := partBlock{file: int32(file), n: int32(len(rec) / partRecordBytes), narrow: narrow}
	if narrow {
		blk.n, blk.hi = int32(len(rec)/partNarrowBytes), hi
	}
	p.mu.Lock()
	if p.f == nil {
		f, err := p.tmp.create("parts")
		if err != nil {
			p.mu.Unlock()
			return fmt.Errorf("rowindex: partition file: %w", err)
		}
		p.f = f
	}
	pf := &p.parts[i]
	blk.off = p.size
	p.size += int64(len(rec))
	pf.size += int64(len(rec))
	pf.rows += int64(blk.n)
	pf.blocks = append(pf.blocks, blk)
	f := p.f
	p.mu.Unlock()
	// Blocks are written at offsets reserved under the lock, the writes
	// themselves in parallel.
	if _, err := f.WriteAt(rec, blk.off); err != nil {
		return fmt.Errorf("rowindex: writing a partition: %w", err)
	}
	p.bytes.Add(int64(len(rec)))
	return nil
}

// keys estimates partition i's distinct keys from its sketch (its rows
// when the sketch is full).
func (p *partitions) keys(i int) int64 {
	zeros := 0
	for _, w := range p.sketch[i*sketchBits/64 : (i+1)*sketchBits/64] {
		zeros += 64 - bits.OnesCount64(w)
	}
	if zeros == 0 {
		return p.parts[i].rows
	}
	est := int64(math.Ceil(sketchBits*math.Log(float64(sketchBits)/float64(zeros)))) << sketchSampleLog
	// A margin for the estimate's error, which the sample makes at least
	// a few times 1<<sketchSampleLog keys: a partition of 64 keys has
	// none sampled 1.6 % of the time. A wrong estimate costs time, not
	// the index: the partition that outgrows the budget hands the build to
	// the run path.
	return min(est+est/8+4<<sketchSampleLog, p.parts[i].rows)
}

// charge is what sorting partition i takes by the scan's estimate.
func (p *partitions) charge(i int) int64 {
	return p.parts[i].rows*partPlaceBytes + p.keys(i)*keyIDKeyBytes
}

// fits reports whether every partition can be sorted within the budget,
// by the scan's estimate; spare is the budget the largest leaves free
// (fragmentWriter.inMemory).
func (p *partitions) fits() (ok bool, spare int64) {
	most := int64(0)
	for i := range p.parts {
		most = max(most, p.charge(i))
	}
	return most <= p.limit, p.limit - most
}

// close closes and removes the partition file (the spill folder's
// removal would too; this frees the disk as soon as the build is done).
func (p *partitions) close() {
	if p.f != nil {
		p.f.Close()
		os.Remove(p.f.Name())
		p.f = nil
	}
}

// partWriter is one scan worker's buffers: per partition the records of
// the data file being scanned, and its sketches.
type partWriter struct {
	p    *partitions
	file int
	bufs []partBuf
	// sketch is the worker's partitions' sketches.
	sketch []uint64
}

// partBuf is a partition's buffered block. Its records are in the layout
// they are written in: narrow while every key's high 32 bits are hi (the
// common case: ids below 2³²), wide from the first key that differs until
// the end of the data file.
type partBuf struct {
	rec  []byte
	hi   uint32
	wide bool
}

func newPartWriter(p *partitions) *partWriter { return &partWriter{p: p, file: -1} }

// addGroup adds the rows of one decoded row group of data file i (in build
// order), whose first row is at row in the file.
func (w *partWriter) addGroup(i int, row int64, keys *intKeys, n int) error {
	p := w.p
	if row < 0 || row+int64(n) > p.fileRows[i] || len(keys.vals) < n {
		// The row groups hold more rows than the footer says: the run
		// path reads such a file (and says what is wrong with it).
		return errKeyIDsFull
	}
	if w.bufs == nil {
		w.bufs = make([]partBuf, p.n)
		for j := range w.bufs {
			w.bufs[j].rec = make([]byte, 0, p.bufBytes)
		}
		w.sketch = make([]uint64, len(p.sketch))
	}
	if w.file != i {
		if err := w.flush(); err != nil {
			return err
		}
		w.file = i
	}
	if p.kind == KindSorted && !p.sampled.Load() {
		p.sample(keys, n)
	}
	// The bounds are set once sampled, and read only then (a group of
	// null keys leaves them unset, and has no key to place).
	sorted, cuts := p.kind == KindSorted, &p.cuts
	var bounds []uint64
	if sorted && p.sampled.Load() {
		bounds = p.bounds
	}
	for r, v := range keys.vals[:n] {
		if keys.null(r) { // null key: no entry
			continue
		}
		var j int
		if sorted {
			j = cuts.count(bounds, v)
		} else {
			j = int(p.hash.intHash(v) >> p.shift)
		}
		if x := v * 0x9E3779B97F4A7C15; x>>(64-sketchSampleLog) == 0 {
			bit := j*sketchBits + int(x>>(64-sketchSampleLog-sketchLog))&(sketchBits-1)
			w.sketch[bit>>6] |= 1 << (bit & 63)
		}
		pb := &w.bufs[j]
		b, at := pb.rec, uint32(row)+uint32(r)
		if !pb.wide {
			if len(b) == 0 {
				pb.hi = uint32(v >> 32)
			}
			if uint32(v>>32) == pb.hi {
				b = binary.LittleEndian.AppendUint64(b, uint64(at)<<32|v&math.MaxUint32)
				if len(b)+partNarrowBytes > cap(b) {
					if err := p.write(j, i, b, true, pb.hi); err != nil {
						return err
					}
					b = b[:0]
				}
				pb.rec = b
				continue
			}
			// A key of other high bits: the narrow records so far are
			// a block, the rest of the file's are wide.
			if err := p.write(j, i, b, true, pb.hi); err != nil {
				return err
			}
			b, pb.wide = b[:0], true
		}
		b = binary.LittleEndian.AppendUint64(b, v)
		b = binary.LittleEndian.AppendUint32(b, at)
		if len(b)+partRecordBytes > cap(b) {
			if err := p.write(j, i, b, false, 0); err != nil {
				return err
			}
			b = b[:0]
		}
		pb.rec = b
	}
	return nil
}

// flush writes the buffered records (at the end of a data file, so that a
// block holds one file's rows).
func (w *partWriter) flush() error {
	for j := range w.bufs {
		pb := &w.bufs[j]
		if len(pb.rec) > 0 {
			if err := w.p.write(j, w.file, pb.rec, !pb.wide, pb.hi); err != nil {
				return err
			}
		}
		pb.rec, pb.wide = pb.rec[:0], false
	}
	return nil
}

// done flushes the worker's last file and merges its sketches.
func (w *partWriter) done() error {
	if err := w.flush(); err != nil {
		return err
	}
	p := w.p
	p.mu.Lock()
	for k, s := range w.sketch {
		p.sketch[k] |= s
	}
	p.mu.Unlock()
	return nil
}

// partSource yields a partitioned build's entries in fragment order (an
// entrySource for the merge), sorting one partition at a time.
type partSource struct {
	ctx  context.Context
	p    *partitions
	s    *keyIDSource // the partition being read
	part int          // the partition to sort next
	buf  []byte
	// pairs are the partition's rows as key id << 32 | row in the
	// build, in build row order; places its rows sorted (s.places). Both
	// are reused from partition to partition.
	pairs  []uint64
	places []uint32
	// table maps the partition's key values to their ids.
	table keyTable
}

// source starts reading the partitions in order.
func (p *partitions) source(ctx context.Context) *partSource {
	s := &keyIDSource{firstID: p.firstID, f: -1, rgStarts: p.rgStarts, r: -1}
	s.starts = make([]int64, len(p.fileRows)+1)
	for f, n := range p.fileRows {
		s.starts[f+1] = s.starts[f] + n
	}
	s.index()
	// The merge holds two fragments' groups in memory when the largest
	// partition leaves room for them (builder.merge); the partitions have
	// the rest.
	p.grant = p.limit
	if ok, spare := p.fits(); ok && spare >= 2*memFragmentBytes {
		p.grant -= 2 * memFragmentBytes
	}
	return &partSource{ctx: ctx, p: p, s: s}
}

func (ps *partSource) next() (*entry, error) {
	for {
		e, err := ps.s.next()
		if err != io.EOF {
			return e, err
		}
		if ps.part >= len(ps.p.parts) {
			return nil, io.EOF
		}
		if err := ps.load(ps.part); err != nil {
			return nil, err
		}
		ps.part++
	}
}

// writeTo feeds every remaining entry to w, partition by partition, a
// key at a time (keyIDSource.writeTo).
func (ps *partSource) writeTo(w *fragmentWriter, progress func(n int64) error) error {
	for {
		if err := ps.s.writeTo(w, progress); err != nil {
			return err
		}
		if ps.part >= len(ps.p.parts) {
			return nil
		}
		if err := ps.load(ps.part); err != nil {
			return err
		}
		ps.part++
	}
}

func (ps *partSource) close() error {
	ps.p.close()
	return nil
}

// partReadBytes is the most a read of the partition file takes: blocks
// that follow each other in the file are read together up to it.
const partReadBytes = 1 << 20

// read calls fn with the records of each of the blocks bs, in their order
// (valid during the call), reading blocks that follow each other in the
// file at once.
func (ps *partSource) read(bs []partBlock, fn func(b *partBlock, rec []byte)) error {
	for len(bs) > 0 {
		k, end := 1, bs[0].off+bs[0].size()
		for k < len(bs) && bs[k].off == end && end+bs[k].size()-bs[0].off <= partReadBytes {
			end += bs[k].size()
			k++
		}
		n := int(end - bs[0].off)
		if cap(ps.buf) < n {
			ps.buf = make([]byte, max(n, partReadBytes))
		}
		buf := ps.buf[:n]
		if _, err := ps.p.f.ReadAt(buf, bs[0].off); err != nil {
			return fmt.Errorf("rowindex: reading a partition: %w", err)
		}
		for j := range k {
			sz := int(bs[j].size())
			fn(&bs[j], buf[:sz])
			buf = buf[sz:]
		}
		bs = bs[k:]
	}
	return nil
}

// load sorts partition i's rows into fragment order as the next keys and
// places of ps.s.
func (ps *partSource) load(i int) error {
	p, s := ps.p, ps.s
	pf := &p.parts[i]
	s.keys, s.buckets, s.places, s.from = nil, nil, nil, nil
	s.r, s.at = -1, 0
	if p.onPartition != nil {
		p.onPartition(p, i)
	}
	// A partition is seconds of work on a large build: a cancelled build
	// stops between two.
	if err := ps.ctx.Err(); err != nil {
		return err
	}
	if pf.rows == 0 {
		return nil
	}
	// Records in build row order: blocks by data file (a file's blocks
	// were written in row order by the one worker that scanned it), so
	// each key's rows come out in (file, row group, row) order.
	slices.SortStableFunc(pf.blocks, func(a, b partBlock) int { return int(a.file) - int(b.file) })
	// One read when the partition's pairs and places, the buffers kept
	// from the partitions before counted, take at most onceShare of the
	// memory the partitions are granted (p.grant: the merge's fragments
	// have the rest): the common partition. Else (a partition of a few
	// heavy keys) the records are read again to place the rows, as the
	// places alone take a third of the pairs and places.
	keys := p.keys(i) * keyIDKeyBytes
	grant := min(p.grant, p.limit)
	held := func() int64 {
		return max(int64(cap(ps.places)), pf.rows)*partPlaceBytes + max(int64(cap(ps.pairs)), pf.rows)*partPairBytes + keys
	}
	if held() > grant/onceShare || int64(cap(ps.places)) > 2*pf.rows {
		// The old ones go before new ones come; a heavy partition's
		// places are not kept for the light ones after it (a live heap
		// near the budget makes the collector run all the time).
		ps.pairs, ps.places = nil, nil
	}
	once := held() <= grant/onceShare
	var pairs []uint64
	if once {
		if int64(cap(ps.pairs)) < pf.rows {
			ps.pairs = make([]uint64, pf.rows)
		}
		pairs = ps.pairs[:pf.rows]
	} else {
		ps.pairs = nil
	}
	vals, counts, err := ps.count(i, pairs, grant)
	if errors.Is(err, errPairsFull) {
		// More keys than the scan estimated: the two reads take less,
		// within the same grant (the merge's fragments have the rest).
		once, pairs, ps.pairs = false, nil, nil
		vals, counts, err = ps.count(i, nil, grant)
	}
	if err != nil {
		return err
	}
	var rank []uint32
	s.keys, s.buckets, rank = rankKeys(vals, p.kind, p.hash)
	vals = nil
	nk := len(s.keys)
	s.from = make([]uint32, nk+1)
	for id, c := range counts {
		s.from[rank[id]+1] = c
	}
	for r := range nk {
		s.from[r+1] += s.from[r]
	}
	// A counting sort: next[id] is where the key's next row goes.
	next := counts
	for id, r := range rank {
		next[id] = s.from[r]
	}
	if int64(cap(ps.places)) < pf.rows {
		ps.places = nil
		ps.places = make([]uint32, pf.rows)
	}
	s.places = ps.places[:pf.rows]
	if once {
		for _, pr := range pairs {
			id := pr >> 32
			s.places[next[id]] = uint32(pr)
			next[id]++
		}
		ps.table.reset(0)
		return nil
	}
	p.twice = append(p.twice, i)
	t := &ps.table
	err = ps.read(pf.blocks, func(b *partBlock, rec []byte) {
		base := uint32(s.starts[b.file])
		step, hi := b.layout()
		for o := 0; o+step <= len(rec); o += step {
			id, _ := t.find(recordKey(rec[o:], hi, step))
			s.places[next[id]] = base + binary.LittleEndian.Uint32(rec[o+step-4:])
			next[id]++
		}
	})
	t.reset(0)
	return err
}

// errPairsFull stops a partition's one read: its keys leave no room for
// a pair a row.
var errPairsFull = errors.New("rowindex: a partition's pairs outgrow the budget")

// partPairBytes is the memory of one row's (key id, row) pair when a
// partition is read once.
const partPairBytes = 8

// onceShare bounds the one read's memory: a partition is read once when its
// pairs, places and keys take at most 1/onceShare of the partitions' grant.
// Pairs of up to the whole grant (three times the places the second read
// needs; ≈18M rows on the 10× lake) put the live heap, with the merge's
// fragments, near the Go memory limit the CLI sets (388 MiB of objects at
// a 432 MiB limit), where the collector runs all the time and its CPU
// limiter lets the heap past the soft limit (one 10× run in three peaked at
// 520 MiB for 512). At a quarter (≈56 MiB, ≈4.7M rows at the default
// budget) most partitions, the light ones, are still read once.
const onceShare = 4

// layout returns the block's record size and, if narrow, its keys' high
// bits.
func (b *partBlock) layout() (step int, hi uint64) {
	if b.narrow {
		return partNarrowBytes, uint64(b.hi) << 32
	}
	return partRecordBytes, 0
}

// recordKey is the key value of the record at the start of rec, of a
// block whose layout is (hi, step).
func recordKey(rec []byte, hi uint64, step int) uint64 {
	if step == partNarrowBytes {
		return hi | uint64(binary.LittleEndian.Uint32(rec))
	}
	return binary.LittleEndian.Uint64(rec)
}

// count reads partition i's records, gives each key an id in ps.table as
// it first appears (vals by id) and counts its rows; with pairs, it also
// stores each row as key id << 32 | row in the build, in build row order.
// More keys than limit bytes hold are errKeyIDsFull, or errPairsFull with
// pairs.
func (ps *partSource) count(i int, pairs []uint64, limit int64) (vals []uint64, counts []uint32, err error) {
	p, s := ps.p, ps.s
	pf := &p.parts[i]
	t := &ps.table
	t.reset(int(min(p.keys(i), pf.rows)))
	fixed := pf.rows * partPlaceBytes
	if pairs != nil {
		fixed += pf.rows * partPairBytes
	}
	n := 0
	over := false
	err = ps.read(pf.blocks, func(b *partBlock, rec []byte) {
		if over {
			return
		}
		base := uint64(s.starts[b.file])
		step, hi := b.layout()
		for o := 0; o+step <= len(rec); o += step {
			v := recordKey(rec[o:], hi, step)
			id, ok := t.find(v)
			if !ok {
				id = uint32(len(vals))
				vals = append(vals, v)
				counts = append(counts, 0)
				t.insert(v, id)
				if fixed+int64(len(vals))*keyIDKeyBytes > limit {
					over = true
					return
				}
			}
			counts[id]++
			if pairs != nil {
				pairs[n] = uint64(id)<<32 | (base + uint64(binary.LittleEndian.Uint32(rec[o+step-4:])))
				n++
			}
		}
	})
	switch {
	case err != nil:
		return nil, nil, err
	case over && pairs != nil:
		return nil, nil, errPairsFull
	case over:
		// More keys than the scan estimated: the run path builds it.
		return nil, nil, errKeyIDsFull
	}
	return vals, counts, nil
}

// keyTable is an open-addressing table of int key values (encoded) to
// uint32 values, at most half full.
type keyTable struct {
	slots []keySlot
	shift uint
	n     int
}

// reset empties the table, sized for about keys keys.
func (t *keyTable) reset(keys int) {
	size := 1 << max(4, bits.Len(uint(2*keys)))
	if keys == 0 {
		t.slots, t.n = nil, 0
		return
	}
	t.slots = make([]keySlot, size)
	t.shift = uint(64 - bits.Len(uint(size-1)))
	t.n = 0
}

// find returns v's value.
func (t *keyTable) find(v uint64) (uint32, bool) {
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for j := (v * 0x9E3779B97F4A7C15) >> t.shift; ; j = (j + 1) & mask {
		sl := &t.slots[j]
		if sl.id == 0 {
			return 0, false
		}
		if sl.v == v {
			return sl.id - 1, true
		}
	}
}

// insert adds v, which is not in the table, with value x.
func (t *keyTable) insert(v uint64, x uint32) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.slots = make([]keySlot, max(16, 2*len(old)))
		t.shift = uint(64 - bits.Len(uint(len(t.slots)-1)))
		t.n = 0
		for _, sl := range old {
			if sl.id != 0 {
				t.insert(sl.v, sl.id-1)
			}
		}
	}
	mask := uint64(len(t.slots) - 1)
	j := (v * 0x9E3779B97F4A7C15) >> t.shift
	for t.slots[j].id != 0 {
		j = (j + 1) & mask
	}
	t.slots[j] = keySlot{v, x + 1}
	t.n++
}
