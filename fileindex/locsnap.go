package fileindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// A locate snapshot is what a view of one main-table version needs, written
// once by the writer that committed the version so that a fresh process
// answers its first locate with a few ranged reads instead of a scan of the
// whole main table (issue 11). It lives beside the index, in a folder the
// Spark library does not know and ignores:
//
//	indexes/<name>/_ariadne_locate/<version, 20 digits>.alocate
//
// One object per version, written with put-if-absent and never modified:
//
//	[0, 8)          magic "ARLOCv1\n"
//	[8, 12)         directory length, uint32 little-endian
//	[12, 16)        CRC-32C of the directory
//	[16, 16+len)    directory: JSON (locSnapDir), then the sections
//
// The directory names the Delta table id and version the snapshot was built
// from (a reader uses it only when both match the snapshot of the main
// table it resolved, so a snapshot of a dropped and re-created index, or of
// another version, is never used), the object's size, and per section its
// offset, length and CRC-32C. Sections:
//
//   - files: per file id, uvarint length + filename, then varint file_size;
//   - per exact or temporal column: the ids of files with a null cell
//     (uvarint count, then uvarint deltas), and the sorted value keys in
//     blocks of about locSnapBlockBytes. A block is [n uint32][n entry
//     offsets uint32][entries], an entry [uvarint key length][key][uvarint
//     payload length][payload], keys ascending, so a key is found by a
//     binary search over the directory's first keys, then one inside the
//     block. An exact payload is the file ids (uvarint count, uvarint
//     deltas); a temporal one is (uvarint count, then per entry uvarint
//     file id and the tagged max_ts);
//   - per bloom or auto-bloom column: per file id, uvarint length + the
//     serialized filter (length 0: null cell);
//   - per range column: per file id, the tagged min and max.
//
// Tagged values keep the Go type of the pqrow value model, so a view built
// from a snapshot compares exactly as one built by the scan. Value keys are
// valueKey's canonical text: a change of valueKey, or of any encoding here,
// must change locSnapMagic.
//
// The directory is written first so that one ranged read of the object's
// first locSnapPrefixBytes gives the directory and, for indexes of up to
// some thousand files, the file list and the null lists too.
const (
	locSnapFolder     = "_ariadne_locate"
	locSnapMagic      = "ARLOCv1\n"
	locSnapHeader     = 16
	locSnapBlockBytes = 64 << 10
)

// locSnapPrefixBytes is the first read of a snapshot.
const locSnapPrefixBytes = 256 << 10

var locSnapCRC = crc32.MakeTable(crc32.Castagnoli)

// Why a snapshot is not used: damaged, or built from another table or
// version than the one the query resolved.
var (
	errLocSnapCorrupt = errors.New("locate snapshot corrupt")
	errLocSnapStale   = errors.New("locate snapshot stale")
)

// locSnapDir is the directory of a snapshot.
type locSnapDir struct {
	TableID  string          `json:"table_id"`
	Version  int64           `json:"version"`
	Size     int64           `json:"size"`
	NumFiles int             `json:"num_files"`
	Files    locSection      `json:"files"`
	Columns  []locSnapColumn `json:"columns"`
}

// locSection locates a section in the object.
type locSection struct {
	Off int64  `json:"off"`
	Len int64  `json:"len"`
	CRC uint32 `json:"crc"`
}

// locSnapColumn is one main-table column of a snapshot.
type locSnapColumn struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // exact, temporal, bloom, range
	// Type is the main-table column's type (schema.MarshalType): a reader
	// uses the column only if its snapshot of the table has the same.
	Type   string      `json:"type"`
	Nulls  *locSection `json:"nulls,omitempty"`  // exact, temporal
	Blocks []locBlock  `json:"blocks,omitempty"` // exact, temporal
	Data   *locSection `json:"data,omitempty"`   // bloom, range
}

// locBlock is one block of sorted keys; First is its first key.
type locBlock struct {
	First []byte `json:"first"`
	locSection
}

var viewKindNames = map[viewKind]string{viewExact: "exact", viewTemporal: "temporal", viewBloom: "bloom", viewRange: "range"}

// locSnapKey is the object key of the snapshot of a version, relative to
// the snapshot folder.
func locSnapKey(version int64) string { return fmt.Sprintf("%020d.alocate", version) }

// locSnapStore is the snapshot folder of the index.
func (fi *FileIndex) locSnapStore() store.Store {
	return store.Sub(fi.ix.Root(), fi.ix.Paths().Dir+"/"+locSnapFolder)
}

// locSnapColumns lists the main-table columns a lookup can load, with the
// kind each is loaded as (the routing of locate.go's evaluators).
func locSnapColumns(m *metadata.Metadata, st *schema.Struct) ([]string, []viewKind) {
	var names []string
	var kinds []viewKind
	add := func(name string, k viewKind) {
		if _, ok := st.Field(name); ok && !slices.Contains(names, name) {
			names = append(names, name)
			kinds = append(kinds, k)
		}
	}
	special := map[string]bool{}
	for _, b := range m.BloomIndexes {
		add(BloomColumn(b.Column), viewBloom)
		special[b.Column] = true
	}
	for _, t := range m.TemporalIndexes {
		add(t.Column, viewTemporal)
		special[t.Column] = true
	}
	for _, r := range m.RangeIndexes {
		add(RangeColumn(r.Column), viewRange)
		special[r.Column] = true
	}
	for _, c := range metadata.StorageColumns(m) {
		if !special[c] {
			add(c, viewExact)
		}
	}
	for _, c := range m.AutoBloomIndexes {
		add(AutoBloomColumn(c), viewBloom)
	}
	return names, kinds
}

// WriteLocateSnapshot writes the locate snapshot of the main table's
// current version unless it exists (one Stat then). Update, Compact and
// DeleteFiles call it after their commits; it also gives an index written by
// the Spark library, which writes none, its snapshot. It scans the main
// table once, one column at a time, and holds one column's view while
// encoding it. A column whose values it cannot encode is left out: lookups
// on it scan. Old snapshots are deleted, except the previous version's,
// which queries that started before the commit may still read.
func (fi *FileIndex) WriteLocateSnapshot(ctx context.Context) error {
	return fi.writeLocateSnapshot(ctx, nil)
}

func (fi *FileIndex) writeLocateSnapshot(ctx context.Context, feed *viewFeed) error {
	tbl, err := delta.Open(ctx, fi.updMainStore())
	if errors.Is(err, delta.ErrNotATable) {
		return nil
	}
	if err != nil {
		return err
	}
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return err
	}
	st := fi.locSnapStore()
	key := locSnapKey(snap.Version())
	if ok, err := store.Exists(ctx, st, key); err != nil || ok {
		return err
	}
	data, err := encodeLocSnap(ctx, snap, fi.ix.Metadata(), feed.view(snap))
	if err != nil {
		return err
	}
	if err := store.WriteAll(ctx, st, key, data, &store.WriteOptions{IfNotExist: true}); err != nil && !errors.Is(err, store.ErrPrecondition) {
		return err
	}
	return pruneLocSnaps(ctx, st, snap.Version())
}

// snapshotAfterCommit is the writers' hook: it writes the locate snapshot
// of the version they committed (they hold the update lock, so no writer
// of ours moves the table meanwhile). The commit stands either way; a
// failure is returned so that it is seen, and the next update, which
// writes a missing snapshot even when it has nothing else to do, repairs
// it.
//
// feed, when not nil, may give the view without a scan (locsnap_feed.go).
func (fi *FileIndex) snapshotAfterCommit(ctx context.Context, feed *viewFeed) error {
	if err := fi.writeLocateSnapshot(ctx, feed); err != nil {
		return fmt.Errorf("fileindex: the index is committed, but its locate snapshot could not be written (locates scan the main table until an update writes it): %w", err)
	}
	return nil
}

// pruneLocSnaps deletes the snapshots of versions before version-1.
func pruneLocSnaps(ctx context.Context, st store.Store, version int64) error {
	var old []string
	for o, err := range st.List(ctx, store.ListOptions{}) {
		if err != nil {
			return err
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(o.Key, ".alocate"), 10, 64)
		if err == nil && strings.HasSuffix(o.Key, ".alocate") && v < version-1 {
			old = append(old, o.Key)
		}
	}
	for _, k := range old {
		if err := st.Delete(ctx, k, nil); err != nil && !errors.Is(err, store.ErrNotExist) {
			return err
		}
	}
	return nil
}

// encodeLocSnap builds the snapshot of snap, from fed (the view of the
// rows an update merged, locsnap_feed.go) where it has a column, else by
// scanning the table.
func encodeLocSnap(ctx context.Context, snap *delta.Snapshot, m *metadata.Metadata, fed *tableView) ([]byte, error) {
	v := fed
	if v == nil {
		v = newTableView(snap)
		v.keepRaw = true
		if err := v.base(ctx); err != nil {
			return nil, err
		}
	}
	var body bytes.Buffer // sections, offsets relative to the body
	section := func(b []byte) locSection {
		s := locSection{Off: int64(body.Len()), Len: int64(len(b)), CRC: crc32.Checksum(b, locSnapCRC)}
		body.Write(b)
		return s
	}
	dir := locSnapDir{TableID: snap.Metadata().ID, Version: snap.Version(), NumFiles: len(v.files)}
	var b []byte
	for i, name := range v.files {
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = binary.AppendVarint(b, v.sizes[i])
	}
	dir.Files = section(b)

	names, kinds := locSnapColumns(m, snap.Schema())
	// Sections are laid out small first: null lists, then bloom and range
	// data, then blocks, so that the first read of a snapshot holds the
	// directory, the file list and the null lists.
	type colData struct {
		col    int // in dir.Columns
		data   []byte
		blocks []encodedBlock
	}
	var pend []colData
	for i, name := range names {
		f, _ := snap.Schema().Field(name)
		var col *viewColumn
		var err error
		if slot := v.cols[name]; fed != nil && slot != nil && slot.col != nil && fed.fedKinds[name] == kinds[i] {
			col = slot.col
		} else {
			col, err = v.load(ctx, f, kinds[i])
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			continue // the column scans at query time, and fails there the same way
		}
		c := locSnapColumn{Name: name, Kind: viewKindNames[kinds[i]], Type: schema.MarshalType(f.Type)}
		switch kinds[i] {
		case viewExact, viewTemporal:
			bs, ok := encodeBlocks(col)
			if !ok {
				continue
			}
			nulls := section(appendIDs(nil, col.nullIDs))
			c.Nulls = &nulls
			pend = append(pend, colData{col: len(dir.Columns), blocks: bs})
		case viewBloom:
			var d []byte
			for id := range v.files {
				var raw []byte
				if col.rawBlooms != nil {
					raw = col.rawBlooms[id]
				}
				d = binary.AppendUvarint(d, uint64(len(raw)))
				d = append(d, raw...)
			}
			pend = append(pend, colData{col: len(dir.Columns), data: d})
		case viewRange:
			var d []byte
			ok := true
			for _, r := range col.ranges {
				if d, ok = appendTagged(d, r.min); !ok {
					break
				}
				if d, ok = appendTagged(d, r.max); !ok {
					break
				}
			}
			if !ok {
				continue
			}
			pend = append(pend, colData{col: len(dir.Columns), data: d})
		}
		dir.Columns = append(dir.Columns, c)
	}
	for _, p := range pend {
		if p.data != nil {
			s := section(p.data)
			dir.Columns[p.col].Data = &s
		}
	}
	for _, p := range pend {
		if p.data != nil {
			continue
		}
		bs := make([]locBlock, len(p.blocks))
		for j, blk := range p.blocks {
			bs[j] = locBlock{First: blk.first, locSection: section(blk.data)}
		}
		dir.Columns[p.col].Blocks = bs
	}

	return frameLocSnap(dir, body.Bytes())
}

// frameLocSnap lays out a snapshot object: header, directory, body. The
// directory's length depends on the offsets it holds: the sections (relative
// to the body in dir) are shifted by the header's length, which grows with
// the offsets' digits. The shift grows until the directory fits in it (with
// slack, so a shift that rolls offsets over a power of ten cannot chase
// itself), and the directory is padded with spaces, which JSON ignores.
func frameLocSnap(dir locSnapDir, body []byte) ([]byte, error) {
	slack := int64(0)
	shift := int64(0)
	for range 64 {
		d := shiftDir(dir, shift)
		d.Size = shift + int64(len(body))
		js, err := json.Marshal(d)
		if err != nil {
			return nil, err
		}
		need := int64(locSnapHeader + len(js))
		if need > shift {
			shift = need + slack
			slack = max(2*slack, 16)
			continue
		}
		js = append(js, bytes.Repeat([]byte{' '}, int(shift-need))...)
		out := make([]byte, 0, shift+int64(len(body)))
		out = append(out, locSnapMagic...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(js)))
		out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(js, locSnapCRC))
		out = append(out, js...)
		out = append(out, body...)
		return out, nil
	}
	return nil, errors.New("fileindex: locate snapshot directory did not settle")
}

// shiftDir returns dir with every section moved by shift bytes.
func shiftDir(dir locSnapDir, shift int64) locSnapDir {
	mv := func(s locSection) locSection { s.Off += shift; return s }
	out := dir
	out.Files = mv(dir.Files)
	out.Columns = make([]locSnapColumn, len(dir.Columns))
	for i, c := range dir.Columns {
		if c.Nulls != nil {
			s := mv(*c.Nulls)
			c.Nulls = &s
		}
		if c.Data != nil {
			s := mv(*c.Data)
			c.Data = &s
		}
		bs := make([]locBlock, len(c.Blocks))
		for j, b := range c.Blocks {
			bs[j] = locBlock{First: b.First, locSection: mv(b.locSection)}
		}
		c.Blocks = bs
		out.Columns[i] = c
	}
	return out
}

// encodedBlock is one block and its first key.
type encodedBlock struct {
	first []byte
	data  []byte
}

// encodeBlocks writes the sorted keys of an exact or temporal column into
// blocks; ok is false when a value cannot be encoded.
func encodeBlocks(col *viewColumn) ([]encodedBlock, bool) {
	var keys []string
	if col.temporal != nil {
		keys = make([]string, 0, len(col.temporal))
		for k := range col.temporal {
			keys = append(keys, k)
		}
	} else {
		keys = make([]string, 0, len(col.postings.idx))
		for k := range col.postings.idx {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []encodedBlock
	var entries []byte
	var offs []uint32
	var first string
	flush := func() {
		if len(offs) == 0 {
			return
		}
		b := make([]byte, 0, 4+4*len(offs)+len(entries))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(offs)))
		for _, o := range offs {
			b = binary.LittleEndian.AppendUint32(b, o)
		}
		b = append(b, entries...)
		out = append(out, encodedBlock{first: []byte(first), data: b})
		entries, offs = entries[:0], offs[:0]
	}
	var payload []byte
	for _, k := range keys {
		payload = payload[:0]
		if col.temporal != nil {
			es := col.temporal[k]
			payload = binary.AppendUvarint(payload, uint64(len(es)))
			for _, e := range es {
				payload = binary.AppendUvarint(payload, uint64(e.file))
				var ok bool
				if payload, ok = appendTagged(payload, e.maxTS); !ok {
					return nil, false
				}
			}
		} else {
			payload = appendIDs(payload, col.postings.get(k))
		}
		if len(offs) == 0 {
			first = k
		}
		offs = append(offs, uint32(len(entries)))
		entries = binary.AppendUvarint(entries, uint64(len(k)))
		entries = append(entries, k...)
		entries = binary.AppendUvarint(entries, uint64(len(payload)))
		entries = append(entries, payload...)
		if len(entries)+4*len(offs) >= locSnapBlockBytes {
			flush()
		}
	}
	flush()
	return out, true
}

// appendIDs appends ascending file ids: a count, then deltas.
func appendIDs(b []byte, ids []int32) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	prev := int32(0)
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(uint32(id-prev)))
		prev = id
	}
	return b
}

// readIDs decodes appendIDs; n is the bytes consumed (0: corrupt).
func readIDs(b []byte, numFiles int) ([]int32, int) {
	cnt, n := binary.Uvarint(b)
	if n <= 0 || cnt > uint64(numFiles) {
		return nil, 0
	}
	ids := make([]int32, cnt)
	prev := int64(0)
	for i := range ids {
		d, m := binary.Uvarint(b[n:])
		if m <= 0 {
			return nil, 0
		}
		n += m
		prev += int64(d)
		if prev >= int64(numFiles) {
			return nil, 0
		}
		ids[i] = int32(prev)
	}
	return ids, n
}
