package fileindex

import (
	"context"
	"encoding/json"
	"iter"
	"slices"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// viewFeed builds the view of the main table from the rows an update
// appends, so that the locate snapshot written after the update does not
// scan the table it just wrote. It holds only while the update's merges
// are blind appends taken from memory onto a main table whose rows the
// feed already holds: none (the first update of an index, or one after
// every row was deleted), or those of the previous version's locate
// snapshot, which seed reads (a later update adding files). Then the
// table's rows are exactly the rows fed. Anything else (an upsert, a
// recovery from staging, rows the feed has not seen, a missing or damaged
// snapshot) turns it off, and the snapshot scans the table as before. The
// view costs what the scan's would (≈ 110 B per distinct value), built as
// the merges go.
type viewFeed struct {
	off   bool
	v     *tableView
	kinds map[string]viewKind // per column, as routed when first fed
	rows  int64               // rows fed = main-table rows
	used  bool                // the snapshot was built from the feed
	// seeded is set once seed was tried; skip names the columns of the
	// seeding version that its snapshot did not give (left out, or of
	// another type): the feed leaves them to the snapshot's scan.
	seeded bool
	skip   map[string]bool
}

func newViewFeed() *viewFeed {
	v := newTableView(nil)
	v.keepRaw = true
	v.ids = map[string]int32{}
	return &viewFeed{v: v, kinds: map[string]viewKind{}}
}

// tableRows returns the main table's row count from its files' statistics,
// false when some file has none.
func tableRows(snap *delta.Snapshot) (int64, bool) {
	var n int64
	for _, f := range snap.Files() {
		var st struct {
			NumRecords *int64 `json:"numRecords"`
		}
		if json.Unmarshal([]byte(f.Stats), &st) != nil || st.NumRecords == nil {
			return 0, false
		}
		n += *st.NumRecords
	}
	return n, true
}

// tee feeds the rows (of schema st) appended onto main-table snapshot
// before, as they stream to the writer; it switches the feed off when
// before holds rows the feed has not seen.
func (f *viewFeed) tee(before *delta.Snapshot, m *metadata.Metadata, st *schema.Struct, rows iter.Seq2[[]any, error]) iter.Seq2[[]any, error] {
	if f == nil || f.off {
		return rows
	}
	if n, ok := tableRows(before); !ok || n != f.rows {
		f.off = true
		return rows
	}
	names, kinds := locSnapColumns(m, st)
	idx := make([]int, len(names))
	cols := make([]*viewColumn, len(names))
	for i, name := range names {
		if f.skip[name] {
			idx[i] = -1
			continue
		}
		idx[i] = slices.Index(st.Names(), name)
		if k, seen := f.kinds[name]; seen && k != kinds[i] {
			f.off = true
			return rows
		}
		f.kinds[name] = kinds[i]
		slot := f.v.cols[name]
		if slot == nil {
			fd, _ := st.Field(name)
			col, err := newViewColumn(fd, kinds[i])
			if err != nil {
				f.off = true
				return rows
			}
			if kinds[i] == viewExact || kinds[i] == viewTemporal {
				// A column new in this merge is null in the files fed
				// before, as a scan would read it.
				for id := range f.v.files {
					col.nullIDs = append(col.nullIDs, int32(id))
				}
			}
			slot = &columnSlot{col: col}
			f.v.cols[name] = slot
		}
		cols[i] = slot.col
	}
	fn, fs := slices.Index(st.Names(), FilenameColumn), slices.Index(st.Names(), FileSizeColumn)
	return func(yield func([]any, error) bool) {
		for r, err := range rows {
			if err == nil && !f.off {
				f.add(r, fn, fs, idx, cols, kinds)
			}
			if !yield(r, err) {
				return
			}
		}
	}
}

func (f *viewFeed) add(r []any, fn, fs int, idx []int, cols []*viewColumn, kinds []viewKind) {
	if fn < 0 {
		f.off = true
		return
	}
	name, ok := r[fn].(string)
	if !ok {
		f.off = true
		return
	}
	v := f.v
	if _, dup := v.ids[name]; dup {
		f.off = true
		return
	}
	id := int32(len(v.files))
	v.ids[name] = id
	v.files = append(v.files, name)
	var size int64
	if fs >= 0 {
		size, _ = r[fs].(int64)
	}
	v.sizes = append(v.sizes, size)
	f.rows++
	for i, col := range cols {
		if idx[i] < 0 {
			continue
		}
		if err := col.add(id, len(v.files), r[idx[i]], kinds[i], true); err != nil {
			f.off = true
			return
		}
	}
}

// seed starts the feed from the locate snapshot of before (the main table
// a merge appends to) when the table holds rows and the feed none yet: the
// rows fed are then the previous version's view, read from its snapshot
// (every block, one coalesced read per run) instead of from the table's
// data files. Without a usable snapshot (missing, of another version,
// damaged, or listing another number of files than the table has rows)
// nothing is seeded and tee switches the feed off. Only a cancelled
// context is an error.
func (f *viewFeed) seed(ctx context.Context, st store.Store, before *delta.Snapshot) error {
	if f == nil || f.off || f.seeded || f.rows > 0 || before.NumFiles() == 0 {
		return nil
	}
	f.seeded = true
	n, ok := tableRows(before)
	if !ok || n == 0 {
		return nil
	}
	give := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return nil // tee finds the rows unfed and switches the feed off
	}
	ls, err := openLocSnap(ctx, st, before)
	if err != nil {
		return give(err)
	}
	files, sizes, err := ls.files(ctx)
	if err != nil || int64(len(files)) != n {
		return give(err)
	}
	ids := make(map[string]int32, len(files))
	for i, name := range files {
		if _, dup := ids[name]; dup {
			return nil
		}
		ids[name] = int32(i)
	}
	cols := map[string]*viewColumn{}
	kinds := map[string]viewKind{}
	skip := map[string]bool{}
	for _, fd := range before.Schema().Fields {
		c := ls.cols[fd.Name]
		var kind viewKind
		found := false
		if c != nil {
			for k, name := range viewKindNames {
				if name == c.Kind {
					kind, found = k, true
				}
			}
		}
		if !found || ls.column(fd, kind) == nil {
			skip[fd.Name] = true
			continue
		}
		col, err := ls.loadFull(ctx, fd, kind, c)
		if err != nil {
			return give(err)
		}
		cols[fd.Name], kinds[fd.Name] = col, kind
	}
	v := f.v
	v.files, v.ids, v.sizes = files, ids, sizes
	for name, col := range cols {
		v.cols[name] = &columnSlot{col: col}
		f.kinds[name] = kinds[name]
	}
	f.skip, f.rows = skip, n
	return nil
}

// view returns the fed view for main-table snapshot snap (its rows exactly
// the rows fed), nil when the feed is off or does not match.
func (f *viewFeed) view(snap *delta.Snapshot) *tableView {
	if f == nil || f.off || f.rows == 0 {
		return nil
	}
	if n, ok := tableRows(snap); !ok || n != f.rows {
		return nil
	}
	v := f.v
	v.snap = snap
	v.based = true
	v.fedKinds = f.kinds
	f.used = true
	for name, slot := range v.cols {
		slot.col.finish(len(v.files), f.kinds[name])
	}
	return v
}

// stop switches the feed off.
func (f *viewFeed) stop() {
	if f != nil {
		f.off = true
	}
}
