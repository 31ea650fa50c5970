package rowindex

import (
	"cmp"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// The build's key-id path, for integer keys: when every row fits the sort
// budget at 8 bytes a row, the scan maps each key to a small dictionary id
// (once per distinct key, in an open-addressing table of the key values
// that the workers share a row group at a time) and keeps one uint32 id
// per row, in row order, per data file. After the scan the distinct keys
// are put in fragment order once ((bucket, key) under a hash row index,
// key under a sorted one), and a counting sort by that rank lists every
// row's place, key by key and, within a key, in (file, row group, row)
// order: the order of the entries, whose runs are read off as consecutive
// rows of one row group. Nothing is spilled, no run file is written or
// merged, and the sort moves 4-byte row numbers instead of 32-byte refs.
//
// It applies to int keys of definitions without cover or aggregate
// columns (their entries carry values beside the key), built through the
// local scan. A build whose rows or distinct keys outgrow the budget stops
// it as soon as a file or row group shows it (errKeyIDsFull) and is
// scanned again by the run path.

// keyIDRowBytes is the memory of one row on the key-id path: its id while
// scanning, its place in the sorted order after.
const keyIDRowBytes = 8

// keyIDKeyBytes is the memory of one distinct key: two table slots (the
// table is at most half full) and, after the scan, its value, rank, count,
// bucket and sort item.
const keyIDKeyBytes = 2*16 + 8 + 4 + 4 + 4 + 16

// noKeyID marks a row whose key is null (it has no entry).
const noKeyID = math.MaxUint32

// errKeyIDsFull stops the key-id path: the build needs the run path.
var errKeyIDsFull = errors.New("rowindex: key ids outgrow the build's budget")

// keySlot is a slot of the key table: a key value and its id + 1 (0: the
// slot is empty).
type keySlot struct {
	v  uint64
	id uint32
}

// keyIDs is one build's key dictionary and per-row ids.
type keyIDs struct {
	limit int64 // bytes the ids, places and dictionary may take

	mu    sync.Mutex
	rows  footerRows // rows reserved (files opened)
	table []keySlot
	shift uint       // 64 - log2(len(table))
	vals  []uint64   // distinct key values (as encoded: sign bit flipped) by id
	ids   [][]uint32 // per data file in build order: each row's id
	// rgStarts are each file's row groups' first rows; firstID is the
	// file id of the build's first file.
	rgStarts [][]int64
	firstID  int32
}

func newKeyIDs(limit int64, files int) *keyIDs {
	k := &keyIDs{limit: limit, ids: make([][]uint32, files), rgStarts: make([][]int64, files), rows: footerRows{files: files}}
	k.resize(1 << 16)
	return k
}

// resize makes the table n slots (a power of two) and puts the keys back.
func (k *keyIDs) resize(n int) {
	k.table = make([]keySlot, n)
	k.shift = uint(64 - bits.Len(uint(n-1)))
	for id, v := range k.vals {
		i := (v * 0x9E3779B97F4A7C15) >> k.shift
		for k.table[i].id != 0 {
			i = (i + 1) & uint64(n-1)
		}
		k.table[i] = keySlot{v, uint32(id) + 1}
	}
}

// charge is the memory the path holds or will hold; k.mu held.
func (k *keyIDs) charge() int64 {
	return k.rows.rows*keyIDRowBytes + int64(len(k.vals))*keyIDKeyBytes
}

// spare is the part of the budget that the sorted places and keys leave
// free once the scan's ids are gone: the merge may hold fragments in
// memory in it (fragmentWriter.inMemory).
func (k *keyIDs) spare() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.limit - k.rows.rows*keyIDRowBytes/2 - int64(len(k.vals))*keyIDKeyBytes
}

// openFile reserves the ids of data file i (in build order), whose footer
// fe holds; class is its key class.
func (k *keyIDs) openFile(i int, fe *FileEntry, class KeyClass) error {
	if class != KeyInt {
		return errKeyIDsFull
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	est := k.rows.add(fe.Rows)
	if k.charge() > k.limit || est*keyIDRowBytes > k.limit || est > math.MaxUint32-1 {
		return errKeyIDsFull
	}
	k.ids[i] = make([]uint32, fe.Rows)
	k.rgStarts[i] = fe.RowGroupStarts
	k.firstID = fe.ID - int32(i)
	return nil
}

// addGroup stores the ids of the n decoded keys of one row group of data
// file i, whose first row is at row in the file.
func (k *keyIDs) addGroup(i int, row int64, keys *intKeys, n int) error {
	ids := k.ids[i]
	if row < 0 || row+int64(n) > int64(len(ids)) || len(keys.vals) < n {
		// The row groups hold more rows than the footer says: the run
		// path reads such a file (and says what is wrong with it).
		return errKeyIDsFull
	}
	dst := ids[row : row+int64(n)]
	k.mu.Lock()
	defer k.mu.Unlock()
	mask := uint64(len(k.table) - 1)
	for r, v := range keys.vals[:n] {
		if keys.null(r) {
			dst[r] = noKeyID
			continue
		}
		j := (v * 0x9E3779B97F4A7C15) >> k.shift
		for {
			sl := &k.table[j]
			if sl.id == 0 {
				break
			}
			if sl.v == v {
				dst[r] = sl.id - 1
				goto next
			}
			j = (j + 1) & mask
		}
		// A new key.
		if len(k.vals) >= noKeyID-1 {
			return errKeyIDsFull
		}
		k.table[j] = keySlot{v, uint32(len(k.vals)) + 1}
		dst[r] = uint32(len(k.vals))
		k.vals = append(k.vals, v)
		if 2*len(k.vals) > len(k.table) {
			if k.charge() > k.limit {
				return errKeyIDsFull
			}
			k.resize(2 * len(k.table))
			mask = uint64(len(k.table) - 1)
		}
	next:
	}
	return nil
}

// footerRows counts the rows of the data files a build has opened (their
// footers) and expects as many a file, the opened ones' average, of the
// files not opened yet: a build far larger than the budget (a lake of many
// large files) leaves a key-id path at its first files' footers, not after
// scanning as many rows as the budget holds for nothing.
type footerRows struct {
	rows          int64
	opened, files int
}

// add counts a file of n rows and returns the rows expected in all.
func (f *footerRows) add(n int64) int64 {
	f.rows += n
	f.opened++
	return f.rows + int64(f.files-f.opened)*(f.rows/int64(f.opened))
}

// keyIDSource yields a key-id build's entries in fragment order (an
// entrySource for the merge).
type keyIDSource struct {
	firstID int32
	// starts[f] is the first row of file f in the build's row numbering;
	// rgStarts[f] its row groups' first rows in the file.
	starts   []int64
	rgStarts [][]int64
	// keys are the distinct key values (encoded) in fragment order,
	// buckets their buckets (hash).
	keys    []uint64
	buckets []int32
	// places[from[r]:from[r+1]] are the rows of the r-th key in order.
	places []uint32
	from   []uint32
	// groups are every row group of the build in order, and bins[b] the
	// last of them starting at or before row b<<binShift: locate's start.
	groups   []flatGroup
	bins     []int32
	binShift uint
	r        int    // key being read
	at       uint32 // next place of it
	e        entry
	kbuf     []byte // the key being read, encoded
	// the row group the last place fell in: file f, group g, rows
	// [lo, hi) in the build's numbering
	f, g   int
	lo, hi int64
}

// source sorts the build's rows into fragment order.
func (k *keyIDs) source(kind Kind, hash BucketHash) *keyIDSource {
	s := &keyIDSource{firstID: k.firstID, f: -1, rgStarts: k.rgStarts, r: -1}
	k.table = nil
	var rank []uint32
	s.keys, s.buckets, rank = rankKeys(k.vals, kind, hash)
	nk := len(s.keys)
	k.vals = nil
	// Counting sort of the rows by rank; rows are visited in file order,
	// so each key's rows come out in (file, rg, row) order.
	s.from = make([]uint32, nk+1)
	s.starts = make([]int64, len(k.ids)+1)
	var total int64
	for f, ids := range k.ids {
		s.starts[f] = total
		total += int64(len(ids))
		for j, id := range ids {
			if id != noKeyID {
				r := rank[id]
				ids[j] = r
				s.from[r+1]++
			}
		}
	}
	s.starts[len(k.ids)] = total
	s.index()
	for r := range nk {
		s.from[r+1] += s.from[r]
	}
	next := rank // reused: the ranks are in the ids now
	copy(next, s.from[:nk])
	s.places = make([]uint32, s.from[nk])
	for f, ids := range k.ids {
		base := uint32(s.starts[f])
		for j, r := range ids {
			if r != noKeyID {
				s.places[next[r]] = base + uint32(j)
				next[r]++
			}
		}
		k.ids[f] = nil
	}
	return s
}

// rankKeys puts distinct keys (values encoded as in keyIDs.vals) in
// fragment order: by value (an encoded key's order is its big-endian
// bytes' order), under a hash row index by bucket (of hash) first. It returns the
// keys in that order, their buckets (nil for a sorted row index) and each
// key's rank by its index in vals.
func rankKeys(vals []uint64, kind Kind, hash BucketHash) (keys []uint64, buckets []int32, rank []uint32) {
	nk := len(vals)
	if kind == KindSorted {
		if keys, rank, ok := rankByRadix(vals); ok {
			return keys, nil, rank
		}
	}
	type item struct {
		bucket int32
		id     uint32
		v      uint64
	}
	items := make([]item, nk)
	byValue := func(a, b item) int { return cmp.Compare(a.v, b.v) }
	if kind == KindSorted {
		for id, v := range vals {
			items[id] = item{id: uint32(id), v: v}
		}
		slices.SortFunc(items, byValue)
	} else {
		// A counting sort by bucket, then each bucket's few keys by value:
		// faster than one comparison sort of all keys by (bucket, value).
		// Buckets are hashed twice (counted, then placed): cheaper than
		// keeping them.
		at := make([]int32, numBuckets+1)
		for _, v := range vals {
			at[hash.intBucket(v)+1]++
		}
		for b := range numBuckets {
			at[b+1] += at[b]
		}
		next := slices.Clone(at[:numBuckets])
		for id, v := range vals {
			b := hash.intBucket(v)
			items[next[b]] = item{bucket: b, id: uint32(id), v: v}
			next[b]++
		}
		for b := range numBuckets {
			if at[b+1]-at[b] > 1 {
				slices.SortFunc(items[at[b]:at[b+1]], byValue)
			}
		}
	}
	keys = make([]uint64, nk)
	if kind != KindSorted {
		buckets = make([]int32, nk)
	}
	rank = make([]uint32, nk)
	for r, it := range items {
		keys[r] = it.v
		if buckets != nil {
			buckets[r] = it.bucket
		}
		rank[it.id] = uint32(r)
	}
	return keys, buckets, rank
}

// rankByRadix is rankKeys of a sorted row index when the keys' spread
// (greatest less least) and their ids fit 64 bits together, as a
// partition's keys (a key range) or a build's few million do: each key's
// offset from the least and its id packed in a uint64, radix-sorted
// (radixSortFrom) instead of a comparison sort of (value, id) items
// (slices.SortFunc took ≈0.5 s of the 10× lake's sorted build).
func rankByRadix(vals []uint64) (keys []uint64, rank []uint32, ok bool) {
	nk := len(vals)
	if nk == 0 {
		return nil, nil, false
	}
	lo, hi := vals[0], vals[0]
	for _, v := range vals {
		lo, hi = min(lo, v), max(hi, v)
	}
	wi := bits.Len(uint(nk - 1))
	if bits.Len64(hi-lo)+wi > 64 {
		return nil, nil, false
	}
	packed := make([]uint64, nk)
	for id, v := range vals {
		packed[id] = (v-lo)<<wi | uint64(id)
	}
	packed = radixSortFrom(packed, make([]uint64, nk), wi)
	keys, rank = make([]uint64, nk), make([]uint32, nk)
	idMask := uint64(1)<<wi - 1
	for r, k := range packed {
		keys[r] = lo + k>>wi
		rank[k&idMask] = uint32(r)
	}
	return keys, rank, true
}

// intHash is h's 64-bit hash of an int key's encoding (tagInt, then v
// big-endian): what h.bucket takes the top bits of, without building the key.
func (h BucketHash) intHash(v uint64) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	x := uint64(offset)
	x = (x ^ tagInt) * prime
	for sh := 56; sh >= 0; sh -= 8 {
		x = (x ^ (v >> uint(sh) & 0xff)) * prime
	}
	return h.finish(x)
}

// intBucket is h.bucket of an int key's encoding.
func (h BucketHash) intBucket(v uint64) int32 { return int32(h.intHash(v) >> 48) }

// flatGroup is a row group of a key-id build: its first row in the
// build's numbering, its file and its index in the file.
type flatGroup struct {
	start int64
	f, g  int32
}

// index lists the build's row groups in order and bins them by first row,
// about one group a bin: a place's group is then found in a step or two
// instead of two binary searches (≈6 % of a key-id build's CPU in arrival
// order, where almost every run falls in a new group).
func (s *keyIDSource) index() {
	for f, rs := range s.rgStarts {
		for g, r := range rs {
			s.groups = append(s.groups, flatGroup{start: s.starts[f] + r, f: int32(f), g: int32(g)})
		}
	}
	total := s.starts[len(s.starts)-1]
	if len(s.groups) == 0 || total == 0 {
		return
	}
	s.binShift = uint(max(0, bits.Len64(uint64(total/int64(len(s.groups))))-1))
	s.bins = make([]int32, total>>s.binShift+1)
	gi := 0
	for b := range s.bins {
		lo := int64(b) << s.binShift
		for gi+1 < len(s.groups) && s.groups[gi+1].start <= lo {
			gi++
		}
		s.bins[b] = int32(gi)
	}
}

// locate sets s.f, s.g, s.lo and s.hi to the row group holding place p:
// the last group starting at or before p (an empty group, or a file left
// out, starts where the next one does).
func (s *keyIDSource) locate(p int64) {
	if s.f >= 0 && p >= s.lo && p < s.hi {
		return
	}
	i := int(s.bins[p>>s.binShift])
	for i+1 < len(s.groups) && s.groups[i+1].start <= p {
		i++
	}
	gr := &s.groups[i]
	s.f, s.g, s.lo = int(gr.f), int(gr.g), gr.start
	if i+1 < len(s.groups) {
		s.hi = s.groups[i+1].start
	} else {
		s.hi = s.starts[len(s.starts)-1]
	}
}

func (s *keyIDSource) next() (*entry, error) {
	if s.r < 0 || s.at >= s.from[s.r+1] {
		// The next key (every key in the order has a row).
		s.r++
		if s.r >= len(s.keys) {
			return nil, io.EOF
		}
		s.at = s.from[s.r]
		s.kbuf = binary.BigEndian.AppendUint64(append(s.kbuf[:0], tagInt), s.keys[s.r])
		s.e.Key = s.kbuf
		if s.buckets != nil {
			s.e.Bucket = s.buckets[s.r]
		}
	}
	end := s.from[s.r+1]
	p := int64(s.places[s.at])
	s.locate(p)
	// The run: the key's following places that follow on in the group.
	n := uint32(1)
	for s.at+n < end && int64(s.places[s.at+n]) == p+int64(n) && p+int64(n) < s.hi {
		n++
	}
	s.at += n
	s.e.File, s.e.RG, s.e.Row, s.e.N, s.e.Cover = s.firstID+int32(s.f), int32(s.g), p-s.lo, int64(n), nil
	return &s.e, nil
}

func (s *keyIDSource) close() error { return nil }

// keyIDEntryBytes is entry.size of every entry of a key-id build: a 9-byte
// int key and no cover.
const keyIDEntryBytes = 9 + 32

// writeTo feeds the source's remaining entries to w: what next and w.add
// do an entry at a time, with the same cuts before the same entries (so
// the same fragments), a key at a time. A key's first entry goes through
// w.cutBefore; its other entries can only be cut by the split rule (a key
// is never a boundary with itself), so the runs up to the split go straight
// into the open group's columns at once (appendRuns). On the 10× lake's
// ≈256M entries the entry at a time (next, add, boundary, addOpen) was
// ≈8 s of ≈47 s of CPU. progress is told the entries added, at most a
// group's worth at a time; its error stops the feed.
func (s *keyIDSource) writeTo(w *fragmentWriter, progress func(n int64) error) error {
	// A key next has started: its rest an entry at a time.
	for s.r >= 0 && s.r < len(s.keys) && s.at < s.from[s.r+1] {
		e, err := s.next()
		if err != nil {
			return err
		}
		if err := w.add(e); err != nil {
			return err
		}
		if err := progress(1); err != nil {
			return err
		}
	}
	sorted := w.kind == KindSorted
	var kb [9]byte
	kb[0] = tagInt
	e := &s.e
	e.Cover = nil
	for s.r+1 < len(s.keys) {
		s.r++
		r := s.r
		binary.BigEndian.PutUint64(kb[1:], s.keys[r])
		bucket := int32(0)
		if s.buckets != nil {
			bucket = s.buckets[r]
		}
		s.kbuf = append(s.kbuf[:0], kb[:]...)
		e.Key, e.Bucket = s.kbuf, bucket
		if err := w.cutBefore(e); err != nil {
			return err
		}
		if sorted {
			w.prevTag, w.prevWord, w.prev9 = tagInt, binary.LittleEndian.Uint64(kb[1:]), true
		}
		at, end := s.from[r], s.from[r+1]
		for at < end {
			if at > s.from[r] {
				// The last batch filled the group to the split: a hot
				// key is cut inside (fragmentSplitBytes).
				if err := w.cutGroup(); err != nil {
					return err
				}
			}
			// cutBefore or cutGroup left the group under the split
			// (cutBefore cuts one at the split, and one at
			// fragmentRowGroupBytes at a boundary): the entries it takes
			// before the split rule cuts it, at least the one.
			room := max((fragmentSplitBytes-w.groupSz+keyIDEntryBytes-1)/keyIDEntryBytes, 1)
			k := s.appendRuns(w, bucket, &kb, &at, end, int(min(room, int64(end-at))))
			if err := progress(int64(k)); err != nil {
				return err
			}
		}
		s.at = end
	}
	return nil
}

// appendRuns appends up to most runs of a key (encoded in kb, in bucket),
// from its place *at on (before end), to w's open group, as add's addOpen
// and bookkeeping would one at a time: the group's columns are grown once
// and filled by index (appending to seven columns an entry at a time was
// ≈3 s of the 10× lake's build), keys as fixed-size copies (a group is cut
// at fragmentSplitBytes, far below addOpen's 2 GiB check). It returns the
// runs added and moves *at past them.
func (s *keyIDSource) appendRuns(w *fragmentWriter, bucket int32, kb *[9]byte, at *uint32, end uint32, most int) int {
	g := &w.open
	n0 := len(g.files)
	if n0 == 0 {
		w.openBucket = bucket
	}
	l0 := len(g.keys)
	keys := slices.Grow(g.keys, 9*most)[:l0+9*most]
	keyEnds := slices.Grow(g.keyEnds, most)[:n0+most]
	coverEnds := slices.Grow(g.coverEnds, most)[:n0+most]
	files := slices.Grow(g.files, most)[:n0+most]
	rgs := slices.Grow(g.rgs, most)[:n0+most]
	gaps := slices.Grow(g.gaps, most)[:n0+most]
	ns := slices.Grow(g.ns, most)[:n0+most]
	hash := w.kind != KindSorted
	// The group's last entry, for a hash row index's row gaps.
	lastF, lastG, lastEnd := w.prevFile, w.prevRG, w.prevRow+w.prevN
	if n0 == 0 {
		lastF = -1 // no entry: no implied row
	}
	c0 := int32(len(g.covers))
	places := s.places
	p0 := *at
	j := 0
	var row, n int64
	var file, rg int32
	for ; j < most && p0 < end; j++ {
		p := int64(places[p0])
		s.locate(p)
		// The run: the key's following places that follow on in the
		// group.
		m := uint32(1)
		for p0+m < end && int64(places[p0+m]) == p+int64(m) && p+int64(m) < s.hi {
			m++
		}
		p0 += m
		file, rg, row, n = s.firstID+int32(s.f), int32(s.g), p-s.lo, int64(m)
		gap := row
		if hash {
			if file == lastF && rg == lastG {
				gap -= lastEnd // impliedRow
			}
			if gap == 0 {
				w.zeroGaps++
			}
			lastF, lastG, lastEnd = file, rg, row+n
		}
		i := n0 + j
		*(*[9]byte)(keys[l0+9*j:]) = *kb
		keyEnds[i] = int32(l0 + 9*j + 9)
		coverEnds[i] = c0
		files[i], rgs[i], gaps[i], ns[i] = file, rg, gap, n
	}
	*at = p0
	g.keys, g.keyEnds, g.coverEnds = keys[:l0+9*j], keyEnds[:n0+j], coverEnds[:n0+j]
	g.files, g.rgs, g.gaps, g.ns = files[:n0+j], rgs[:n0+j], gaps[:n0+j], ns[:n0+j]
	if j > 0 {
		w.groupSz += int64(j) * keyIDEntryBytes
		w.fileSz += int64(j) * keyIDEntryBytes
		w.prevBucket, w.prevFile, w.prevRG, w.prevRow, w.prevN = bucket, file, rg, row, n
		w.any = true
	}
	return j
}
