package fileindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// The read side of locate snapshots (locsnap.go has the format). A view
// opens the snapshot of its version on its first query: one ranged read of
// the object's first locSnapPrefixBytes gives the directory, and usually the
// file list and null lists. Exact and temporal columns then stay on storage
// and are read block by block, only the blocks that hold a queried key
// (adjacent ones coalesced into one read), and kept in memory as read:
// raw blocks, searched in place, about the size of the encoded column when
// every block is in, against ≈ 110 B per value of the scan's map. Bloom and
// range columns are read whole (one section each) on first use, as the scan
// would read them.
//
// A snapshot that is missing, of another table or version, or corrupt (bad
// magic, CRC, or a section beyond the object) is not used: the view falls
// back to the scan, column by column where the damage is found late (a
// block), and LocatePlan says so. A cancelled context is returned as an
// error, never taken for damage.

// locSnap is the opened snapshot of one view.
type locSnap struct {
	st     store.Store
	key    string
	dir    locSnapDir
	prefix []byte // the object's first bytes, as read with the directory
	cols   map[string]*locSnapColumn
}

// openLocSnap opens the snapshot of snap's version. A missing snapshot is
// store.ErrNotExist; a stale one wraps errLocSnapStale, a damaged one
// errLocSnapCorrupt.
func openLocSnap(ctx context.Context, st store.Store, snap *delta.Snapshot) (*locSnap, error) {
	key := locSnapKey(snap.Version())
	prefix, err := readRange(ctx, st, key, 0, locSnapPrefixBytes)
	if err != nil {
		return nil, err
	}
	if len(prefix) < locSnapHeader || string(prefix[:len(locSnapMagic)]) != locSnapMagic {
		return nil, fmt.Errorf("%w: %s: bad header", errLocSnapCorrupt, key)
	}
	dirLen := int64(binary.LittleEndian.Uint32(prefix[8:]))
	dirCRC := binary.LittleEndian.Uint32(prefix[12:])
	end := locSnapHeader + dirLen
	if end > int64(len(prefix)) {
		if len(prefix) < locSnapPrefixBytes {
			return nil, fmt.Errorf("%w: %s: truncated directory", errLocSnapCorrupt, key)
		}
		rest, err := readRange(ctx, st, key, int64(len(prefix)), end-int64(len(prefix)))
		if err != nil {
			return nil, err
		}
		prefix = append(prefix, rest...)
		if end > int64(len(prefix)) {
			return nil, fmt.Errorf("%w: %s: truncated directory", errLocSnapCorrupt, key)
		}
	}
	js := prefix[locSnapHeader:end]
	if crc32.Checksum(js, locSnapCRC) != dirCRC {
		return nil, fmt.Errorf("%w: %s: directory checksum mismatch", errLocSnapCorrupt, key)
	}
	s := &locSnap{st: st, key: key, prefix: prefix, cols: make(map[string]*locSnapColumn)}
	if err := json.Unmarshal(js, &s.dir); err != nil {
		return nil, fmt.Errorf("%w: %s: directory: %v", errLocSnapCorrupt, key, err)
	}
	d := &s.dir
	if d.TableID != snap.Metadata().ID || d.Version != snap.Version() {
		return nil, fmt.Errorf("%w: %s was built from table %s version %d, the main table is %s version %d",
			errLocSnapStale, key, d.TableID, d.Version, snap.Metadata().ID, snap.Version())
	}
	inside := func(sec locSection) bool {
		return sec.Off >= end && sec.Len >= 0 && sec.Off+sec.Len <= d.Size
	}
	ok := inside(d.Files) && d.NumFiles >= 0
	for i := range d.Columns {
		c := &d.Columns[i]
		for _, sec := range []*locSection{c.Nulls, c.Data} {
			ok = ok && (sec == nil || inside(*sec))
		}
		for j, b := range c.Blocks {
			ok = ok && inside(b.locSection) && (j == 0 || bytes.Compare(c.Blocks[j-1].First, b.First) < 0)
		}
		s.cols[c.Name] = c
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s: directory out of bounds", errLocSnapCorrupt, key)
	}
	return s, nil
}

// readRange reads [off, off+n) of key (fewer bytes at the end of the
// object) and counts the read on ctx's locate cost.
func readRange(ctx context.Context, st store.Store, key string, off, n int64) ([]byte, error) {
	r, err := st.NewRangeReader(ctx, key, off, n)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	// One allocation of the size asked (ReadAll would grow and copy a
	// multi-MiB run of blocks several times); fewer bytes at the end.
	b := make([]byte, n)
	m, err := io.ReadFull(r, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	b = b[:m]
	if c := costOf(ctx); c != nil {
		c.reads.Add(1)
		c.bytes.Add(int64(len(b)))
	}
	return b, err
}

// column returns the snapshot's entry for a main-table column loaded as
// kind, nil when the snapshot does not have it so (or has another type).
func (s *locSnap) column(f schema.Field, kind viewKind) *locSnapColumn {
	c := s.cols[f.Name]
	if c == nil || c.Kind != viewKindNames[kind] || c.Type != schema.MarshalType(f.Type) {
		return nil
	}
	return c
}

// sections returns the bytes of secs, checked against their CRCs: from the
// prefix when they lie in it, otherwise by ranged reads, adjacent sections
// (gaps up to locSnapGapBytes) coalesced into one.
func (s *locSnap) sections(ctx context.Context, secs []locSection) ([][]byte, error) {
	out := make([][]byte, len(secs))
	var far []int
	for i, sec := range secs {
		if sec.Off+sec.Len <= int64(len(s.prefix)) {
			out[i] = s.prefix[sec.Off : sec.Off+sec.Len]
		} else {
			far = append(far, i)
		}
	}
	slices.SortFunc(far, func(a, b int) int { return int(secs[a].Off - secs[b].Off) })
	for len(far) > 0 {
		lo, hi := secs[far[0]].Off, secs[far[0]].Off+secs[far[0]].Len
		n := 1
		for ; n < len(far); n++ {
			sec := secs[far[n]]
			if sec.Off > hi+locSnapGapBytes {
				break
			}
			hi = max(hi, sec.Off+sec.Len)
		}
		b, err := readRange(ctx, s.st, s.key, lo, hi-lo)
		if err != nil {
			return nil, err
		}
		if int64(len(b)) != hi-lo {
			return nil, fmt.Errorf("%w: %s: short read at %d", errLocSnapCorrupt, s.key, lo)
		}
		for _, i := range far[:n] {
			out[i] = b[secs[i].Off-lo : secs[i].Off-lo+secs[i].Len]
		}
		far = far[n:]
	}
	for i, sec := range secs {
		if crc32.Checksum(out[i], locSnapCRC) != sec.CRC {
			return nil, fmt.Errorf("%w: %s: checksum mismatch at %d", errLocSnapCorrupt, s.key, sec.Off)
		}
	}
	return out, nil
}

// locSnapGapBytes: sections at most this far apart are read together.
const locSnapGapBytes = 128 << 10

// files decodes the file list.
func (s *locSnap) files(ctx context.Context) ([]string, []int64, error) {
	b, err := s.sections(ctx, []locSection{s.dir.Files})
	if err != nil {
		return nil, nil, err
	}
	p := b[0]
	files := make([]string, s.dir.NumFiles)
	sizes := make([]int64, s.dir.NumFiles)
	for i := range files {
		l, n := binary.Uvarint(p)
		if n <= 0 || uint64(len(p)-n) < l {
			return nil, nil, fmt.Errorf("%w: %s: file list", errLocSnapCorrupt, s.key)
		}
		files[i] = string(p[n : n+int(l)])
		p = p[n+int(l):]
		size, m := binary.Varint(p)
		if m <= 0 {
			return nil, nil, fmt.Errorf("%w: %s: file list", errLocSnapCorrupt, s.key)
		}
		sizes[i], p = size, p[m:]
	}
	return files, sizes, nil
}

// loadColumn builds the view column of c: exact and temporal columns get
// their null list and lazy blocks, bloom and range columns are decoded.
func (s *locSnap) loadColumn(ctx context.Context, f schema.Field, kind viewKind, c *locSnapColumn) (*viewColumn, error) {
	col := &viewColumn{}
	corrupt := func(what string) error {
		return fmt.Errorf("%w: %s: column %q: %s", errLocSnapCorrupt, s.key, f.Name, what)
	}
	nf := s.dir.NumFiles
	switch kind {
	case viewExact, viewTemporal:
		a, _ := f.Type.(*schema.Array)
		col.elem = a.Element
		if kind == viewTemporal {
			col.elem = a.Element.(*schema.Struct).Fields[0].Type
		}
		if c.Nulls == nil {
			return nil, corrupt("no null list")
		}
		b, err := s.sections(ctx, []locSection{*c.Nulls})
		if err != nil {
			return nil, err
		}
		ids, n := readIDs(b[0], nf)
		if n == 0 {
			return nil, corrupt("null list")
		}
		col.nullIDs = ids
		col.lazy = &lazyBlocks{snap: s, blocks: c.Blocks, raw: make([][]byte, len(c.Blocks)), unread: len(c.Blocks)}
		return col, nil
	}
	if c.Data == nil {
		return nil, corrupt("no data")
	}
	b, err := s.sections(ctx, []locSection{*c.Data})
	if err != nil {
		return nil, err
	}
	p := b[0]
	switch kind {
	case viewBloom:
		col.blooms = make([]*bloomBits, nf)
		for id := range nf {
			l, n := binary.Uvarint(p)
			if n <= 0 || uint64(len(p)-n) < l {
				return nil, corrupt("bloom filters")
			}
			if l > 0 {
				bf, err := parseBloom(p[n : n+int(l)])
				if err != nil {
					return nil, corrupt(err.Error())
				}
				col.blooms[id] = bf
			}
			p = p[n+int(l):]
		}
	case viewRange:
		st, _ := f.Type.(*schema.Struct)
		col.elem = st.Fields[0].Type
		col.ranges = make([]rangeCell, nf)
		for id := range nf {
			lo, n := readTagged(p)
			if n == 0 {
				return nil, corrupt("ranges")
			}
			hi, m := readTagged(p[n:])
			if m == 0 {
				return nil, corrupt("ranges")
			}
			col.ranges[id] = rangeCell{min: lo, max: hi}
			p = p[n+m:]
		}
	}
	return col, nil
}

// loadFull builds the view column of c with everything in memory, as a
// scan of the table builds it (postings or temporal entries instead of
// lazy blocks, the raw bloom filters kept): the view a later update's
// feed extends (locsnap_feed.go).
func (s *locSnap) loadFull(ctx context.Context, f schema.Field, kind viewKind, c *locSnapColumn) (*viewColumn, error) {
	col, err := s.loadColumn(ctx, f, kind, c)
	if err != nil {
		return nil, err
	}
	nf := s.dir.NumFiles
	corrupt := func(what string) error {
		return fmt.Errorf("%w: %s: column %q: %s", errLocSnapCorrupt, s.key, f.Name, what)
	}
	switch kind {
	case viewExact, viewTemporal:
		secs := make([]locSection, len(c.Blocks))
		for i, b := range c.Blocks {
			secs[i] = b.locSection
		}
		blocks, err := s.sections(ctx, secs)
		if err != nil {
			return nil, err
		}
		col.lazy = nil
		if kind == viewExact {
			col.postings = newPostingMap()
		} else {
			col.temporal = make(map[string][]temporalEntry)
		}
		for _, blk := range blocks {
			err := eachEntry(blk, func(key, payload []byte) error {
				if kind == viewExact {
					ids, n := readIDs(payload, nf)
					if n == 0 {
						return corrupt("file ids")
					}
					col.postings.set(string(key), ids)
					return nil
				}
				es, ok := decodeTemporal(payload, nf)
				if !ok {
					return corrupt("temporal entries")
				}
				col.temporal[string(key)] = es
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	case viewBloom:
		b, err := s.sections(ctx, []locSection{*c.Data})
		if err != nil {
			return nil, err
		}
		p := b[0]
		col.rawBlooms = make([][]byte, nf)
		for id := range nf {
			l, n := binary.Uvarint(p)
			if n <= 0 || uint64(len(p)-n) < l {
				return nil, corrupt("bloom filters")
			}
			if l > 0 {
				col.rawBlooms[id] = p[n : n+int(l)]
			}
			p = p[n+int(l):]
		}
	}
	return col, nil
}

// eachEntry calls fn with every (key, payload) of a block, in order.
func eachEntry(blk []byte, fn func(key, payload []byte) error) error {
	if len(blk) < 4 {
		return fmt.Errorf("%w: bad block: no entry count", errLocSnapCorrupt)
	}
	n := uint64(binary.LittleEndian.Uint32(blk))
	if 4+4*n > uint64(len(blk)) {
		return fmt.Errorf("%w: bad block: entry count beyond the block", errLocSnapCorrupt)
	}
	p := blk[4+4*n:]
	for range n {
		kl, m := binary.Uvarint(p)
		if m <= 0 || uint64(len(p)-m) < kl {
			return fmt.Errorf("%w: bad block entry", errLocSnapCorrupt)
		}
		key := p[m : m+int(kl)]
		p = p[m+int(kl):]
		pl, m := binary.Uvarint(p)
		if m <= 0 || uint64(len(p)-m) < pl {
			return fmt.Errorf("%w: bad block payload", errLocSnapCorrupt)
		}
		if err := fn(key, p[m:m+int(pl)]); err != nil {
			return err
		}
		p = p[m+int(pl):]
	}
	return nil
}

// lazyBlocks are the sorted-key blocks of an exact or temporal column,
// read on demand and kept.
type lazyBlocks struct {
	snap   *locSnap
	blocks []locBlock

	mu     sync.Mutex
	raw    [][]byte // per block, nil until read
	unread int      // blocks still nil in raw
	// first is the cost counter of the first locate call that searched
	// the column (one per call: a per-key locate searches many times).
	first *locateCost
	seen  bool
}

// find calls fn with the index in keys and the payload of every key the
// column holds; keys absent from it are skipped.
//
// The first locate call reads only the blocks its keys need: a CLI process
// makes one and exits. A column asked by another call is in a long-lived
// process: that call reads every block still unread (one coalesced read),
// so that from then on queries read nothing, as with a view built by the
// scan.
func (lb *lazyBlocks) find(ctx context.Context, keys []string, fn func(i int, payload []byte) error) error {
	// The block of each key: the last whose first key is ≤ it.
	at := make([]int, len(keys))
	var need []int
	var wanted map[int]bool
	lb.mu.Lock()
	call := costOf(ctx)
	if !lb.seen {
		lb.seen, lb.first = true, call
	}
	later := call == nil || call != lb.first
	if later && lb.unread > 0 {
		for b, r := range lb.raw {
			if r == nil {
				need = append(need, b)
			}
		}
	}
	for i, k := range keys {
		b := sort.Search(len(lb.blocks), func(j int) bool { return string(lb.blocks[j].First) > k }) - 1
		at[i] = b
		if !later && b >= 0 && lb.raw[b] == nil && !wanted[b] {
			if wanted == nil {
				wanted = make(map[int]bool)
			}
			wanted[b] = true
			need = append(need, b)
		}
	}
	lb.mu.Unlock()
	if len(need) > 0 {
		secs := make([]locSection, len(need))
		for i, b := range need {
			secs[i] = lb.blocks[b].locSection
		}
		data, err := lb.snap.sections(ctx, secs)
		if err != nil {
			return err
		}
		// Blocks stay slices of the read that fetched them: a coalesced
		// read holds little but blocks that are kept too (the gaps of at
		// most locSnapGapBytes), and the prefix is kept anyway.
		for i := range need {
			if len(data[i]) < 4 || 4+4*int64(binary.LittleEndian.Uint32(data[i])) > int64(len(data[i])) {
				return fmt.Errorf("%w: %s: block header", errLocSnapCorrupt, lb.snap.key)
			}
		}
		lb.mu.Lock()
		for i, b := range need {
			if lb.raw[b] == nil {
				lb.raw[b] = data[i]
				lb.unread--
			}
		}
		lb.mu.Unlock()
	}
	lb.mu.Lock()
	raws := make([][]byte, len(keys))
	for i, b := range at {
		if b >= 0 {
			raws[i] = lb.raw[b]
		}
	}
	lb.mu.Unlock()
	for i, k := range keys {
		if raws[i] == nil {
			continue
		}
		payload, ok, err := searchBlock(raws[i], k)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", errLocSnapCorrupt, lb.snap.key, err)
		}
		if ok {
			if err := fn(i, payload); err != nil {
				return err
			}
		}
	}
	return nil
}

// searchBlock finds key in a block by binary search over its entry offsets.
// A probe decodes only the entry's key; the payload only of the match.
func searchBlock(blk []byte, key string) ([]byte, bool, error) {
	// A block that does not hold its own offset table is corrupt, not a
	// panic (found by FuzzLocateSnapshotSections).
	if len(blk) < 4 {
		return nil, false, errors.New("bad block: no entry count")
	}
	n64 := uint64(binary.LittleEndian.Uint32(blk))
	if 4+4*n64 > uint64(len(blk)) {
		return nil, false, errors.New("bad block: entry count beyond the block")
	}
	n := int(n64)
	entries := blk[4+4*n:]
	keyAt := func(i int) ([]byte, []byte, bool) {
		off := int(binary.LittleEndian.Uint32(blk[4+4*i:]))
		if off >= len(entries) {
			return nil, nil, false
		}
		p := entries[off:]
		kl, m := uint64(p[0]), 1
		if kl >= 0x80 {
			if kl, m = binary.Uvarint(p); m <= 0 {
				return nil, nil, false
			}
		}
		if uint64(len(p)-m) < kl {
			return nil, nil, false
		}
		return p[m : m+int(kl)], p[m+int(kl):], true
	}
	bad := false
	i := sort.Search(n, func(i int) bool {
		k, _, ok := keyAt(i)
		if !ok {
			bad = true
			return true
		}
		return string(k) >= key
	})
	if bad {
		return nil, false, errors.New("bad entry")
	}
	if i == n {
		return nil, false, nil
	}
	k, rest, _ := keyAt(i)
	if string(k) != key {
		return nil, false, nil
	}
	pl, m := binary.Uvarint(rest)
	if m <= 0 || uint64(len(rest)-m) < pl {
		return nil, false, errors.New("bad entry payload")
	}
	return rest[m : m+int(pl)], true, nil
}

// decodeTemporal decodes a temporal payload.
func decodeTemporal(p []byte, numFiles int) ([]temporalEntry, bool) {
	cnt, n := binary.Uvarint(p)
	if n <= 0 || cnt > uint64(len(p)) {
		return nil, false
	}
	p = p[n:]
	out := make([]temporalEntry, cnt)
	for i := range out {
		id, m := binary.Uvarint(p)
		if m <= 0 || id >= uint64(numFiles) {
			return nil, false
		}
		v, k := readTagged(p[m:])
		if k == 0 {
			return nil, false
		}
		out[i] = temporalEntry{file: int32(id), maxTS: v}
		p = p[m+k:]
	}
	return out, true
}

// locateCost counts the snapshot reads of one locate call.
type locateCost struct{ reads, bytes atomic.Int64 }

type costKey struct{}

// withCost returns ctx carrying a fresh cost counter.
func withCost(ctx context.Context) (context.Context, *locateCost) {
	c := &locateCost{}
	return context.WithValue(ctx, costKey{}, c), c
}

func costOf(ctx context.Context) *locateCost {
	c, _ := ctx.Value(costKey{}).(*locateCost)
	return c
}
