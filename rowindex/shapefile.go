package rowindex

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ariadne-go/ariadne/store"
)

// Shape files. A handle learns a page's shape (pageShape) by reading the
// page whole, so a fresh process — a CLI lookup, a new server before its
// Warm — reads a light key's every 1 MiB page whole. SaveShapes persists
// the shapes a handle learnt, a file per data file, beside the row index:
//
//	row_indexes/<name>/shapes/<fnv64a(uri)>-<size>-<footer crc>.shapes
//
// named by what a lookup checks before it reads the data file, so a
// rewritten data file has another name and its old shape file is never
// read (Vacuum deletes it). A shape file is
//
//	"ARSH" | version u32 | directory length u32 | directory CRC-32C u32
//	directory: uri, size, footer CRC, n, n × (row group, column, page + 1
//	           (0: the chunk's dictionary page), page offset, page size,
//	           record length)   (uvarints)
//	n records, in the directory's order: the shape (shapecodec.go) and its
//	           CRC-32C, u32
//
// (integers little-endian). A lookup whose planned pages have no shape
// lists shapes/ once a handle, reads the directories of its files' shape
// files (with the records that follow within shapeHeadBytes) and then the
// records of its pages, and plans those files again (readPieces). Warm
// (within Options.ShapeBytes) reads a file's shape file whole instead of
// its pages. A directory or record that does not match its data file, its page
// or its checksum is ignored: the page is read whole.

const (
	shapeFileMagic   = "ARSH"
	shapeFileVersion = 1
	shapeHeaderBytes = 16
	// shapeHeadBytes is a shape file's first read: its header and
	// directory (≈14 bytes a page: 1,100 pages) and the records after it
	// (a small file's all). Larger, it read records lookups rarely want.
	shapeHeadBytes = 16 << 10
	// shapeRecordGap: records closer than this are read in one request.
	shapeRecordGap = 64 << 10
	// shapeFileMax bounds a shape file Warm reads whole.
	shapeFileMax = 256 << 20
	// shapeListRetry is how long a failed listing of shapes/ stands, and
	// shapeListTimeout how long a listing may take.
	shapeListRetry   = 30 * time.Second
	shapeListTimeout = time.Minute
	// shapePrefetchWide bounds the shape files a batch prefetches as wide
	// as the store's coalescing gap (a hot key's batch may touch hundreds
	// of files); the others read shapeHeadBytes.
	shapePrefetchWide = 32
	// shapeRecordReads bounds a file's record reads in flight.
	shapeRecordReads = 8
)

// shapeFileKey is the key, in the index store, of a data file's shape
// file.
func shapeFileKey(name string, fe *FileEntry) string {
	h := fnv.New64a()
	io.WriteString(h, fe.URI)
	return fmt.Sprintf("%sshapes/%016x-%d-%08x.shapes", folderOf(name), h.Sum64(), fe.Size, fe.FooterCRC)
}

// shapeRecord is a page's record in a shape file's directory.
type shapeRecord struct {
	rg, col, page int
	pageOff       int64
	pageSize      int64
	off, n        int64 // in the shape file, its CRC included
}

// shapeDir is a shape file's directory; bad, when not nil, says why the
// file is ignored.
type shapeDir struct {
	records map[[3]int]shapeRecord
	bad     error
}

// shapeDirKey caches a shape file's directory (a *shapeDir) by its key.
type shapeDirKey struct{ key string }

// shapeListing is a handle's listing of its shape files (key → size). A
// lookup that reads data starts it in the background (startShapeListing),
// so that it runs beside the fragment reads and is held by the time the
// footers are read; a Refresh drops it (the new version's files may have
// shape files), as does SaveShapes; a failed listing stands for
// shapeListRetry.
type shapeListing struct {
	mu       sync.Mutex
	done     bool
	failedAt time.Time
	sizes    map[string]int64
	running  chan struct{} // closed when the listing in flight ends; nil: none
}

// forget drops a shape file that has gone from the listing.
func (l *shapeListing) forget(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.sizes[key]; ok {
		sizes := maps.Clone(l.sizes) // lookups may hold the old map
		delete(sizes, key)
		l.sizes = sizes
	}
}

// reset makes the next lookup list the shape files again; a listing in
// flight then ends without recording its result.
func (l *shapeListing) reset() {
	l.mu.Lock()
	l.done, l.failedAt, l.sizes, l.running = false, time.Time{}, nil, nil
	l.mu.Unlock()
}

// startShapeListing lists the shape files in the background when no
// listing is held, in flight, or failed within shapeListRetry: a lookup's
// first step, so that the listing's round is the fragment reads'.
func (ri *RowIndex) startShapeListing(ctx context.Context, m *meter) {
	ri.shapeList.mu.Lock()
	ri.startListingLocked(ctx, m)
	ri.shapeList.mu.Unlock()
}

// startListingLocked starts the listing (shapeList.mu held) and returns
// the channel closed when the one in flight ends (nil: none is, and none
// is due). The listing does not end with the lookup that started it (a
// server's request context ends with its response, often before a LIST
// does): it has shapeListTimeout of its own.
func (ri *RowIndex) startListingLocked(ctx context.Context, m *meter) chan struct{} {
	l := &ri.shapeList
	if l.running != nil {
		return l.running
	}
	if l.done || time.Since(l.failedAt) < shapeListRetry {
		return nil
	}
	ch := make(chan struct{})
	l.running = ch
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shapeListTimeout)
	go func() {
		defer cancel()
		defer close(ch)
		sizes, err := listShapeFiles(lctx, m, ri.st, ri.name)
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.running != ch {
			return // reset since (a Refresh, SaveShapes): its listing is due
		}
		l.running = nil
		if err != nil {
			l.failedAt = time.Now()
			return
		}
		l.done, l.sizes = true, sizes
	}()
	return ch
}

// shapeFiles returns the row index's shape files by key, with their
// sizes (none when there are none, or the listing failed): the listing
// held, or the one in flight (started if due) once it ends. It never
// lists while holding the listing's lock.
func (ri *RowIndex) shapeFiles(ctx context.Context, m *meter) map[string]int64 {
	l := &ri.shapeList
	l.mu.Lock()
	ch := ri.startListingLocked(ctx, m)
	l.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sizes
}

// listShapeFiles lists row index name's shape files (key → size).
func listShapeFiles(ctx context.Context, m *meter, st store.Store, name string) (map[string]int64, error) {
	sizes := map[string]int64{}
	m.requests.Add(1)
	for info, err := range st.List(ctx, store.ListOptions{Prefix: folderOf(name) + "shapes/"}) {
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(info.Key, ".shapes") {
			sizes[info.Key] = info.Size
		}
	}
	return sizes, nil
}

// ShapeFileStats lists the shape files of row index man.Name in the index
// folder idx and returns how many of man's data files have one, and those
// files' bytes (describe; shape files of files man no longer lists are
// Vacuum's to delete and not counted).
func ShapeFileStats(ctx context.Context, idx store.Store, man *Manifest) (files int, bytes int64, err error) {
	sizes, err := listShapeFiles(ctx, new(meter), idx, man.Name)
	if err != nil {
		return 0, 0, err
	}
	for i := range man.Files {
		if n, ok := sizes[shapeFileKey(man.Name, &man.Files[i])]; ok {
			files++
			bytes += n
		}
	}
	return files, bytes, nil
}

// loadShapes reads, for the files of a planned batch whose pages have no
// shape (fileWork.noShape), the records of those pages from the files'
// shape files into the metadata cache: files in parallel, each its
// directory (cached; prefetched with the file's footer by
// prefetchShapeDir) and then its records. A file that gained a shape is
// marked (fileWork.shapesAdded: readPieces plans it again).
func (ri *RowIndex) loadShapes(ctx context.Context, m *meter, works []*fileWork) {
	var sizes map[string]int64
	var wg sync.WaitGroup
	for _, w := range works {
		if len(w.noShape) == 0 {
			continue
		}
		if sizes == nil {
			if sizes = ri.shapeFiles(ctx, m); len(sizes) == 0 {
				return
			}
		}
		key := shapeFileKey(ri.name, w.fe)
		size, ok := sizes[key]
		if !ok {
			continue
		}
		wg.Go(func() {
			w.shapesAdded = ri.loadFileShapes(ctx, m, w, object{st: ri.st, key: key, uri: key}, size)
		})
	}
	wg.Wait()
}

// prefetchShapeDir reads the directory of w's shape file, when it has one
// not yet cached, on wg: readPieces calls it for a file whose footer it
// loads (a handle new to the file), so that the directory comes in the
// footer's round rather than in one of its own after the plan. Its
// goroutine, not the footer loop, waits for the listing the lookup started
// (shapeFiles). It does nothing on a handle that has learnt shapes (a
// warmed handle knows its pages' shapes: its footers reloaded after an
// eviction need no shape file). The nth
// prefetch of a batch beyond shapePrefetchWide reads shapeHeadBytes, not
// the store's gap.
func (ri *RowIndex) prefetchShapeDir(ctx context.Context, m *meter, w *fileWork, wg *sync.WaitGroup, nth int) {
	if _, learnt := ri.shapes.stats(); learnt > 0 {
		return
	}
	key := shapeFileKey(ri.name, w.fe)
	if _, ok := ri.cache.get(shapeDirKey{key}); ok {
		return
	}
	gap := ri.gapFor(ri.st)
	if nth >= shapePrefetchWide {
		gap = 0
	}
	wg.Go(func() {
		size, ok := ri.shapeFiles(ctx, m)[key]
		if !ok {
			return
		}
		w.shapeDir, w.shapeHead = ri.readShapeDir(ctx, m, w, object{st: ri.st, key: key, uri: key}, size, gap)
	})
}

// readShapeDir reads and parses the directory of w's shape file o of size
// bytes and caches it; it returns the directory (nil when it could not be
// read: tried again by the next lookup) and the bytes read with it.
func (ri *RowIndex) readShapeDir(ctx context.Context, m *meter, w *fileWork, o object, size, gap int64) (*shapeDir, []byte) {
	head, err := readShapeHead(ctx, m, o, size, gap)
	if errors.Is(err, store.ErrNotExist) {
		ri.shapeList.forget(o.key) // deleted (Vacuum): listed again after a Refresh
		return nil, nil
	}
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, nil
	}
	dir, err := parseShapeDir(head, w.fe, size)
	if err != nil {
		// Remembered: later lookups read the file's pages whole without
		// counting it again.
		dir = &shapeDir{bad: err}
		w.ignoreShapeFile(o.key, err)
	}
	ri.cache.put(shapeDirKey{o.key}, dir, int64(64+48*len(dir.records)))
	return dir, head
}

// loadFileShapes loads the shapes of w's pages without one from its shape
// file o of size bytes.
func (ri *RowIndex) loadFileShapes(ctx context.Context, m *meter, w *fileWork, o object, size int64) bool {
	added := false
	// head: read with the directory, so records in it cost no request.
	dir, head := w.shapeDir, w.shapeHead
	w.shapeDir, w.shapeHead = nil, nil
	if dir == nil {
		if v, ok := ri.cache.get(shapeDirKey{o.key}); ok {
			dir = v.(*shapeDir)
		} else if dir, head = ri.readShapeDir(ctx, m, w, o, size, ri.gapFor(ri.st)); dir == nil {
			return false
		}
	}
	if dir.bad != nil {
		return false
	}
	var need []shapeRecord
	for _, pk := range w.noShape {
		if _, ok := ri.knownShape(pk); ok {
			added = true
			continue
		}
		rec, ok := dir.records[[3]int{pk.rg, pk.col, pk.page}]
		switch {
		case !ok:
		case rec.off+rec.n <= int64(len(head)):
			if err := ri.cacheShapeRecord(w, rec, head[rec.off:rec.off+rec.n]); err == nil {
				added = true
				w.shapeRecords++
			} else {
				w.ignoreShapeFile(o.key, err)
			}
		default:
			need = append(need, rec)
		}
	}
	// The records' ranges, coalesced within the store's gap (at least
	// shapeRecordGap) and read in parallel, shapeRecordReads at a time (one
	// round, not one a range).
	slices.SortFunc(need, func(a, b shapeRecord) int { return cmp.Compare(a.off, b.off) })
	recGap := max(shapeRecordGap, ri.gapFor(o.st))
	var groups [][]shapeRecord
	for i := 0; i < len(need); {
		j := i + 1
		for j < len(need) && need[j].off-(need[j-1].off+need[j-1].n) <= recGap {
			j++
		}
		groups = append(groups, need[i:j])
		i = j
	}
	bufs := make([][]byte, len(groups))
	errs := make([]error, len(groups))
	eachOnWorkers(len(groups), shapeRecordReads, func(gi int) {
		g := groups[gi]
		off, end := g[0].off, g[len(g)-1].off+g[len(g)-1].n
		bufs[gi], errs[gi] = readRange(ctx, m, o, off, end-off)
	})
	for gi, g := range groups {
		if errs[gi] != nil {
			w.ignoreShapeFile(o.key, errs[gi]) // the pages are read whole
			continue
		}
		off := g[0].off
		for _, rec := range g {
			if err := ri.cacheShapeRecord(w, rec, bufs[gi][rec.off-off:rec.off-off+rec.n]); err == nil {
				added = true
				w.shapeRecords++
			} else {
				w.ignoreShapeFile(o.key, err)
			}
		}
	}
	return added
}

// readShapeHead reads a shape file's first shapeHeadBytes, or gap bytes
// when more (all of a smaller file), and the rest of its directory when
// that is longer: on a store whose requests cost latency (a coalescing gap
// of a megabyte), the records come with the directory rather than in a
// round of their own.
func readShapeHead(ctx context.Context, m *meter, o object, size, gap int64) ([]byte, error) {
	b, err := readRange(ctx, m, o, 0, min(size, max(shapeHeadBytes, gap)))
	if err != nil || len(b) < shapeHeaderBytes {
		return b, err
	}
	dirEnd := shapeHeaderBytes + int64(binary.LittleEndian.Uint32(b[8:]))
	if dirEnd > int64(len(b)) && dirEnd <= size {
		rest, err := readRange(ctx, m, o, int64(len(b)), dirEnd-int64(len(b)))
		if err != nil {
			return nil, err
		}
		b = append(b, rest...)
	}
	return b, nil
}

// parseShapeDir parses the header and directory at the start of a shape
// file of size bytes (b), checking them against the data file fe.
func parseShapeDir(b []byte, fe *FileEntry, size int64) (*shapeDir, error) {
	if len(b) < shapeHeaderBytes || string(b[:4]) != shapeFileMagic {
		return nil, fmt.Errorf("%w: not a shape file", errShapeCorrupt)
	}
	if v := binary.LittleEndian.Uint32(b[4:]); v != shapeFileVersion {
		return nil, fmt.Errorf("%w: version %d", errShapeCorrupt, v)
	}
	dirEnd := shapeHeaderBytes + int64(binary.LittleEndian.Uint32(b[8:]))
	if dirEnd > int64(len(b)) || dirEnd > size {
		return nil, fmt.Errorf("%w: directory past the file's end", errShapeCorrupt)
	}
	dir := b[shapeHeaderBytes:dirEnd]
	if crc32.Checksum(dir, castagnoli) != binary.LittleEndian.Uint32(b[12:]) {
		return nil, fmt.Errorf("%w: directory checksum", errShapeCorrupt)
	}
	r := &shapeReader{b: dir}
	uvar := func() int64 {
		if r.err != nil {
			return 0
		}
		v, n := binary.Uvarint(r.b)
		if n <= 0 || v > 1<<62 {
			r.fail("directory")
			return 0
		}
		r.b = r.b[n:]
		return int64(v)
	}
	uri := r.b[:min(int(uvar()), len(r.b))]
	r.b = r.b[len(uri):]
	if string(uri) != fe.URI || uvar() != fe.Size || uvar() != int64(fe.FooterCRC) {
		return nil, fmt.Errorf("%w: made for another data file", errShapeCorrupt)
	}
	n := uvar()
	if n > int64(len(r.b)) {
		return nil, fmt.Errorf("%w: directory length", errShapeCorrupt)
	}
	d := &shapeDir{records: make(map[[3]int]shapeRecord, n)}
	off := dirEnd
	for range n {
		rec := shapeRecord{rg: int(uvar()), col: int(uvar()), page: int(uvar()) - 1, pageOff: uvar(), pageSize: uvar(), off: off, n: uvar()}
		if rec.n < 4 || rec.n > size-off {
			r.fail("record past the file's end")
		}
		if r.err != nil {
			return nil, r.err
		}
		d.records[[3]int{rec.rg, rec.col, rec.page}] = rec
		off += rec.n
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, fmt.Errorf("%w: directory", errShapeCorrupt)
	}
	return d, nil
}

// decodeShapeRecord decodes a page's record (b, its CRC last), checked
// against the page in the data file (fm).
func decodeShapeRecord(fm *fileMeta, rec shapeRecord, b []byte) (*pageShape, error) {
	if rec.rg >= len(fm.f.Metadata().RowGroups) || rec.col >= fm.ncol() {
		return nil, fmt.Errorf("%w: no such column chunk", errShapeCorrupt)
	}
	if rec.page == dictShapePage {
		if dr := fm.dictRange(rec.rg, rec.col); dr.off != rec.pageOff || dr.end-dr.off != rec.pageSize {
			return nil, fmt.Errorf("%w: not the data file's dictionary page", errShapeCorrupt)
		}
	} else if locs := fm.offsetIndex(rec.rg, rec.col); rec.page >= len(locs) || locs[rec.page].Offset != rec.pageOff || int64(locs[rec.page].CompressedPageSize) != rec.pageSize {
		return nil, fmt.Errorf("%w: not the data file's page", errShapeCorrupt)
	}
	ci, ok := directInfo(fm, rec.rg, rec.col)
	if !ok {
		return nil, fmt.Errorf("%w: a column read whole", errShapeCorrupt)
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, fmt.Errorf("%w: record checksum", errShapeCorrupt)
	}
	return decodeShape(body, int(rec.pageSize), ci)
}

// cacheShapeRecord decodes a record into the metadata cache (as a lookup
// that learnt it would), reporting whether it did.
func (ri *RowIndex) cacheShapeRecord(w *fileWork, rec shapeRecord, b []byte) error {
	sh, err := decodeShapeRecord(w.fm, rec, b)
	if err != nil {
		return fmt.Errorf("record of row group %d, column %d, page %d: %w", rec.rg, rec.col, rec.page, err)
	}
	ri.cache.put(shapeKey(pageKey{w.fe.ID, rec.rg, rec.col, rec.page}), sh, sh.charge())
	return nil
}

// ignoreShapeFile records that w's shape file key, or a record of it, was
// passed over, and the first reason why (Plan.ShapeFileIgnoredReason).
func (w *fileWork) ignoreShapeFile(key string, why error) {
	if w.shapeFileIgnored == "" {
		w.shapeFileIgnored = path.Base(key) + ": " + why.Error()
	}
}

// SaveShapesResult is what SaveShapes wrote.
type SaveShapesResult struct {
	// Files counts the shape files written, Pages the page shapes in
	// them, Bytes their size.
	Files, Pages int
	Bytes        int64
	// Existing counts the data files whose shape file was saved before
	// (it is never rewritten: its name says which data it describes).
	Existing int
	// Missing counts the pages lookups may read in parts whose shape the
	// handle does not know (not saved: a Warm that reads every file's
	// pages — Options.ShapeBytes set, or by default on local stores —
	// learns every one first).
	Missing int
}

// SaveShapes writes, for every data file of the handle's version that has
// none yet, a shape file of the shapes the handle knows of its pages —
// learnt by Warm (within Options.ShapeBytes) or by lookups — so that other
// handles, in this process or another, read light keys' values in parts
// from their first lookup. Concurrent savers of one file write the same
// bytes; the first wins. It needs the data files' footers (read, as Warm
// reads them, when not cached).
func (ri *RowIndex) SaveShapes(ctx context.Context) (SaveShapesResult, error) {
	var res SaveShapesResult
	man, _ := ri.snapshot()
	m := new(meter)
	existing, err := listShapeFiles(ctx, m, ri.st, ri.name)
	if err != nil {
		return res, err
	}
	var (
		mu    sync.Mutex
		first error
	)
	eachOnWorkers(len(man.Files), 4, func(i int) {
		fe := &man.Files[i]
		key := shapeFileKey(ri.name, fe)
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if _, ok := existing[key]; ok || stop {
			if ok {
				mu.Lock()
				res.Existing++
				mu.Unlock()
			}
			return
		}
		b, pages, missing, err := ri.encodeShapeFile(ctx, m, fe)
		if err == nil && pages > 0 {
			err = store.WriteAll(ctx, ri.st, key, b, &store.WriteOptions{IfNotExist: true, ContentType: "application/octet-stream"})
		}
		mu.Lock()
		defer mu.Unlock()
		res.Missing += missing
		switch {
		case errors.Is(err, store.ErrPrecondition):
			res.Existing++
		case err != nil:
			first = cmp.Or(first, err)
		case pages > 0:
			res.Files++
			res.Pages += pages
			res.Bytes += int64(len(b))
		}
	})
	ri.shapeList.reset()
	return res, first
}

// encodeShapeFile encodes the shape file of one data file: the shapes the
// handle knows of the pages lookups may read in parts, and how many such
// pages it does not know.
func (ri *RowIndex) encodeShapeFile(ctx context.Context, m *meter, fe *FileEntry) (b []byte, pages, missing int, err error) {
	fm, _, err := ri.dataMeta(ctx, m, fe)
	if err != nil || fm.copies != nil {
		return nil, 0, 0, err // a prepared file's copied columns are read by their frames
	}
	var dir, records []byte
	n := 0
	ncol := fm.ncol()
	keyLeaf, _ := ri.indexedKeyLeaf(fm, ri.Manifest().Key) // never read by lookups (Warm learnt none)
	for rg := range fm.f.Metadata().RowGroups {
		for col := range ncol {
			if col == keyLeaf || !fm.aligned[rg*ncol+col] || framedChunk(fm, rg, col) || !ri.subPageReads(fm, rg, col) {
				continue
			}
			add := func(page int, off, size int64) {
				sh, ok := ri.knownShape(pageKey{fe.ID, rg, col, page})
				if !ok {
					if page != dictShapePage {
						missing++
					}
					return
				}
				start := len(records)
				records = appendShape(records, sh)
				records = binary.LittleEndian.AppendUint32(records, crc32.Checksum(records[start:], castagnoli))
				for _, v := range []int64{int64(rg), int64(col), int64(page + 1), off, size, int64(len(records) - start)} {
					dir = binary.AppendUvarint(dir, uint64(v))
				}
				n++
			}
			if dr := fm.dictRange(rg, col); dr.end > dr.off {
				add(dictShapePage, dr.off, dr.end-dr.off)
			}
			for j, loc := range fm.offsetIndex(rg, col) {
				add(j, loc.Offset, int64(loc.CompressedPageSize))
			}
		}
	}
	if n == 0 {
		return nil, 0, missing, nil
	}
	head := binary.AppendUvarint(nil, uint64(len(fe.URI)))
	head = append(head, fe.URI...)
	head = binary.AppendUvarint(head, uint64(fe.Size))
	head = binary.AppendUvarint(head, uint64(fe.FooterCRC))
	head = binary.AppendUvarint(head, uint64(n))
	head = append(head, dir...)
	b = append([]byte(shapeFileMagic), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[4:], shapeFileVersion)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(head)))
	binary.LittleEndian.PutUint32(b[12:], crc32.Checksum(head, castagnoli))
	b = append(append(b, head...), records...)
	return b, n, missing, nil
}

// loadWarmShapes keeps the shapes of fe's shape file, read whole, in the
// handle's set (Warm, before it reads the pages still without a shape),
// and returns the column chunks (row group, column) it kept shapes of. A
// shape file that cannot be read or does not match is passed over; a full
// set is errShapeBudget.
func (ri *RowIndex) loadWarmShapes(ctx context.Context, m *meter, fm *fileMeta, fe *FileEntry, sizes map[string]int64) (map[[2]int]bool, error) {
	key := shapeFileKey(ri.name, fe)
	size, ok := sizes[key]
	if !ok || size > shapeFileMax {
		return nil, nil
	}
	b, err := readRange(ctx, m, object{st: ri.st, key: key, uri: key}, 0, size)
	if err != nil {
		return nil, nil
	}
	dir, err := parseShapeDir(b, fe, size)
	if err != nil {
		return nil, nil
	}
	loaded := map[[2]int]bool{}
	for _, rec := range dir.records {
		pk := pageKey{fe.ID, rec.rg, rec.col, rec.page}
		if _, ok := ri.shapes.get(pk); ok {
			continue // adopted from another handle, which decoded the dictionary
		}
		sh, err := decodeShapeRecord(fm, rec, b[rec.off:rec.off+rec.n])
		if err != nil {
			continue
		}
		if err := ri.keepShape(pk, sh); err != nil {
			return loaded, err
		}
		loaded[[2]int{rec.rg, rec.col}] = true
	}
	return loaded, nil
}
