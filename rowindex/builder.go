package rowindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

// Memory plan of a build (see WithMemory). The budget goes to the sort
// buffers of the scanning workers (one runBuffer each), less buildOverhead
// for what a build holds beside them: per worker one row group's column
// chunks and decoded values, the fragment writer's open row group and
// buffers, the merge's read buffers (maxFanIn × mergeReadBuffer), and the
// garbage those leave between two collections (measured: ≈60 MiB at
// 128 MiB and at 512 MiB with the Go memory limit at the budget), and the
// spills' write buffers. At 64 MiB a sorted build of the 1 GB lake peaked
// at 512.08 MiB once the key-window sort's scratch was in use for every
// buffer (hash row indexes too); 80 MiB leaves a margin.
const (
	// buildOverhead is the part of the budget kept out of the sort
	// buffers (at most half of it).
	buildOverhead = 80 << 20
	// minWorkerBytes is the smallest sort buffer worth a scanning worker
	// of its own: a smaller budget scans fewer files at once.
	minWorkerBytes = 16 << 20
	// maxWorkerBytes caps one worker's sort buffer (runRef arena offsets
	// are 30 bits).
	maxWorkerBytes = 1 << 30
	// maxFanIn is the most runs merged at once; more runs are first merged
	// in groups into longer runs.
	maxFanIn = 64
	// mergeReadBuffer is the read buffer of each run being merged.
	mergeReadBuffer = 64 << 10
)

// builder is one build's scan, sort and merge.
type builder struct {
	cfg   buildConfig
	def   *Definition
	hash  BucketHash // the manifest's, under a hash row index
	tmp   *spillDir
	start time.Time

	workers int
	limit   int64 // sort buffer bytes per worker
	// kid, when set, is the key-id path (keyids.go): the scan stores key
	// ids per row instead of filling sort buffers.
	kid *keyIDs
	// part, when set, is the partitioned key-id path (partitions.go): the
	// scan writes (key, row) records to partition files.
	part *partitions

	mu   sync.Mutex // guards runs, mems and prog's non-atomic fields
	runs []string   // spilled run files
	mems []*runBuffer
	prog BuildProgress

	filesDone, rows, dataBytes, entries atomic.Int64
	written, frags                      atomic.Int64
	engineFiles, engineBytes            atomic.Int64 // what an EntryEngine's scans read

	reportMu sync.Mutex // one progress call at a time
}

func newBuilder(cfg buildConfig, def *Definition, hash BucketHash, tmp *spillDir, files int, start time.Time) *builder {
	sortBudget := cfg.memory - buildOverhead
	if sortBudget < cfg.memory/2 {
		sortBudget = cfg.memory / 2
	}
	keyIDs := cfg.engine == nil && !cfg.noKeyIDs && len(def.Cover) == 0 && len(def.Aggregates) == 0
	workers := int(min(int64(buildWorkers), max(1, sortBudget/minWorkerBytes), int64(max(files, 1))))
	if keyIDs && cfg.partitioned {
		// No sort buffers: a worker holds its partitions' buffers.
		workers = min(buildWorkers, max(files, 1))
	}
	b := &builder{cfg: cfg, def: def, hash: hash, tmp: tmp, start: start, workers: workers,
		limit: min(sortBudget/int64(workers), maxWorkerBytes)}
	b.prog.Phase, b.prog.Files = "scan", files
	switch {
	case keyIDs && cfg.partitioned:
		b.part = newPartitions(def.Kind, hash, sortBudget, tmp, files, workers)
		b.part.onPartition = cfg.onPartition
	case keyIDs:
		// The sort buffers stay empty on this path: it has their budget.
		b.kid = newKeyIDs(sortBudget, files)
	}
	return b
}

// snapshot returns the current progress.
func (b *builder) snapshot() BuildProgress {
	b.mu.Lock()
	p := b.prog
	b.mu.Unlock()
	p.FilesDone = int(b.filesDone.Load())
	p.Rows, p.DataBytes, p.Entries = b.rows.Load(), b.dataBytes.Load(), b.entries.Load()
	p.Fragments, p.IndexBytes = int(b.frags.Load()), b.written.Load()
	if b.part != nil {
		p.SpillBytes += b.part.bytes.Load()
		b.part.mu.Lock()
		p.Partitions = b.part.n
		b.part.mu.Unlock()
	}
	p.Elapsed = time.Since(b.start)
	return p
}

func (b *builder) report() {
	if b.cfg.progress == nil {
		return
	}
	b.reportMu.Lock()
	defer b.reportMu.Unlock()
	b.cfg.progress(b.snapshot())
}

// setPhase starts a phase and reports it.
func (b *builder) setPhase(phase string) {
	b.mu.Lock()
	b.prog.Phase = phase
	b.mu.Unlock()
	b.report()
}

// reportEvery reports progress every d until the returned stop is called.
func (b *builder) reportEvery(d time.Duration) (stop func()) {
	if b.cfg.progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				b.report()
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// scanResult is one data file's scan.
type scanResult struct {
	fe           FileEntry
	class        KeyClass
	scanR, scanB int64
	err          error
	skip         string // why the file was left out (unusableFile), "" = indexed
}

// scanAll scans the files with b.workers workers, each filling its own
// sort buffer and spilling it when full. Files are taken in order, so after
// a failure no later file is started and every earlier one has finished:
// the caller reports the first failure in file order.
func (b *builder) scanAll(ctx context.Context, m *meter, res Resolver, firstID int32, uris []string) ([]scanResult, error) {
	results := make([]scanResult, len(uris))
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	errs := make([]error, b.workers)
	for w := range b.workers {
		wg.Go(func() {
			sw := newScanWorker(b)
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(uris) {
					break
				}
				r := &results[i]
				r.fe.URI = uris[i]
				r.fe.ID = firstID + int32(i)
				sw.file = i
				r.class, r.err = sw.scanFile(ctx, m, res, &r.fe, &r.scanR, &r.scanB)
				if u := (*unusableFile)(nil); errors.As(r.err, &u) {
					// Nothing of it was emitted: left out, the others go on.
					r.skip, r.err = u.reason(), nil
				}
				if r.err != nil {
					failed.Store(true)
					break
				}
				b.filesDone.Add(1)
			}
			if failed.Load() {
				return
			}
			if sw.pw != nil {
				if errs[w] = sw.pw.done(); errs[w] != nil {
					return
				}
			}
			// The last buffer stays in memory as a run.
			if len(sw.rb.refs) > 0 {
				sw.rb.sort()
				b.mu.Lock()
				b.mems = append(b.mems, sw.rb)
				b.mu.Unlock()
			}
			errs[w] = sw.err
		})
	}
	wg.Wait()
	return results, errors.Join(errs...)
}

// spill sorts a full buffer, writes it as a run file and empties it.
func (b *builder) spill(rb *runBuffer) error {
	rb.sort()
	f, err := b.tmp.create("run")
	if err != nil {
		return fmt.Errorf("rowindex: spilling a sorted run: %w", err)
	}
	n, err := writeRun(f, rb)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("rowindex: spilling a sorted run: %w", err)
	}
	rb.reset()
	b.mu.Lock()
	b.runs = append(b.runs, f.Name())
	b.prog.Runs++
	b.prog.SpillBytes += n
	b.mu.Unlock()
	return nil
}

// merge streams every run, in fragment order, into fragments, combining
// the aggregate partials of one key and data file that a worker spilled in
// several pieces. It returns the fragments, their bytes and the entries
// written.
func (b *builder) merge(ctx context.Context, idx store.Store, name string, kind Kind, aggs []Aggregate) (_ []FragmentEntry, _ int64, _ int64, err error) {
	b.setPhase("merge")
	b.entries.Store(0)
	// Too many runs to merge at once: merge them in groups first.
	for len(b.runs) > maxFanIn {
		group := b.runs[:maxFanIn]
		merged, err := b.mergeRuns(group)
		if err != nil {
			return nil, 0, 0, err
		}
		b.runs = append(b.runs[maxFanIn:], merged)
	}
	// Two fragments' groups (one filled while the previous one is
	// encoded) held in memory, when the key-id path leaves room for them.
	memFrags := b.kid != nil && b.kid.spare() >= 2*memFragmentBytes
	if b.part != nil {
		_, spare := b.part.fits()
		memFrags = spare >= 2*memFragmentBytes
	}
	var srcs []entrySource
	closeAll := func() {
		for _, s := range srcs {
			s.close()
		}
	}
	for _, p := range b.runs {
		r, err := openRun(p, mergeReadBuffer)
		if err != nil {
			closeAll()
			return nil, 0, 0, err
		}
		srcs = append(srcs, r)
	}
	for _, rb := range b.mems {
		srcs = append(srcs, &memRun{b: rb})
	}
	if b.kid != nil {
		srcs = append(srcs, b.kid.source(kind, b.hash))
	}
	if b.part != nil {
		srcs = append(srcs, b.part.source(ctx))
	}
	var mg entrySource
	if len(srcs) == 1 {
		// One run (a key-id build, or one buffer): read as it is.
		mg = srcs[0]
	} else {
		m, err := newMerger(srcs)
		if err != nil {
			closeAll()
			return nil, 0, 0, err
		}
		mg = m
	}
	defer mg.close()
	fw := newFragmentWriter(ctx, idx, name, kind, b.tmp)
	fw.inMemory = memFrags
	defer func() {
		if err != nil {
			// No manifest will list the fragments stored so far (nor the
			// one in flight): they go.
			fw.wait()
			deleteFragments(ctx, idx, name, fw.out)
		}
	}()
	fw.onFragment = func(fe FragmentEntry) {
		b.frags.Add(1)
		b.written.Add(fe.Size)
	}
	var n int64
	add := func(e *entry) error {
		n++
		if n&0xffff == 0 {
			b.entries.Store(n)
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return fw.add(e)
	}
	if ks, ok := mg.(keyRunSource); ok && len(aggs) == 0 {
		// A key-id build: a key's runs at a time (keyIDSource.writeTo).
		err := ks.writeTo(fw, func(k int64) error {
			if (n+k)>>16 != n>>16 {
				b.entries.Store(n + k)
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			n += k
			return nil
		})
		if err != nil {
			return nil, 0, 0, err
		}
		b.entries.Store(n)
		frags, written, err := fw.close()
		return frags, written, n, err
	}
	// pend is a per-file aggregate record held back until the next entry
	// shows whether more partials of its key and file follow.
	var pend entry
	var pendBuf []byte
	var pendState *aggState
	havePend := false
	flushPend := func() error {
		havePend = false
		if pendState != nil {
			pend.Cover = pendState.encode(aggs)
			pendState = nil
		}
		return add(&pend)
	}
	for {
		e, err := mg.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, 0, err
		}
		if havePend {
			if e.RG == aggRG && e.File == pend.File && e.Bucket == pend.Bucket && bytes.Equal(e.Key, pend.Key) {
				if pendState == nil {
					if pendState, err = decodeAggState(aggs, pend.Cover); err != nil {
						return nil, 0, 0, err
					}
				}
				o, err := decodeAggState(aggs, e.Cover)
				if err != nil {
					return nil, 0, 0, err
				}
				pendState.merge(aggs, o)
				continue
			}
			if err := flushPend(); err != nil {
				return nil, 0, 0, err
			}
		}
		if e.RG == aggRG && e.File != aggFile {
			pendBuf = append(append(pendBuf[:0], e.Key...), e.Cover...)
			pend = *e
			pend.Key, pend.Cover = pendBuf[:len(e.Key):len(e.Key)], pendBuf[len(e.Key):]
			havePend = true
			continue
		}
		if err := add(e); err != nil {
			return nil, 0, 0, err
		}
	}
	if havePend {
		if err := flushPend(); err != nil {
			return nil, 0, 0, err
		}
	}
	b.entries.Store(n)
	frags, written, err := fw.close()
	return frags, written, n, err
}

// keyRunSource is an entrySource of a key-id build that can feed a
// fragment writer a key at a time instead of an entry at a time (writeTo:
// the same entries and cuts).
type keyRunSource interface {
	entrySource
	writeTo(w *fragmentWriter, progress func(n int64) error) error
}

// mergeRuns merges run files into one and deletes them.
func (b *builder) mergeRuns(paths []string) (string, error) {
	var srcs []entrySource
	for _, p := range paths {
		r, err := openRun(p, mergeReadBuffer)
		if err != nil {
			for _, s := range srcs {
				s.close()
			}
			return "", err
		}
		srcs = append(srcs, r)
	}
	mg, err := newMerger(srcs)
	if err != nil {
		return "", err
	}
	defer mg.close()
	f, err := b.tmp.create("run")
	if err != nil {
		return "", err
	}
	defer f.Close()
	rw := newRunWriter(f)
	for {
		e, err := mg.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		if err := rw.writeEntry(e); err != nil {
			return "", err
		}
	}
	if err := rw.flush(); err != nil {
		return "", err
	}
	return f.Name(), nil
}

// scanWorker scans data files into its own sort buffer.
type scanWorker struct {
	b     *builder
	file  int // the file being scanned, in build order
	rb    *runBuffer
	pw    *partWriter // the partitioned key-id path's buffers
	err   error
	cover []byte
	vals  []chunkValues
	decs  []chunkDecoder
	// ints is the key column of a key-id path (decodeInts), reused.
	ints intKeys
	// aggregate partials of the file being scanned, by encoded key
	aggs      map[string]*aggState
	aggCharge int64
	aggVals   []any
	// emitted counts entries not yet added to b.entries (countEntries):
	// one atomic add per entry on a counter every worker shares was a
	// contended cache line per entry.
	emitted int64
}

// countEntries adds the entries emitted since the last call to the
// build's progress.
func (w *scanWorker) countEntries() {
	w.b.entries.Add(w.emitted)
	w.emitted = 0
}

func newScanWorker(b *builder) *scanWorker {
	w := &scanWorker{b: b, rb: newRunBuffer(b.limit), aggs: map[string]*aggState{}}
	if b.part != nil {
		w.pw = newPartWriter(b.part)
	}
	return w
}

// emit adds an entry to the sort buffer, spilling it first when full.
func (w *scanWorker) emit(bucket int32, key []byte, file, rg int32, row, n int64, cover []byte) error {
	if w.rb.full(recordBytes(key, row, n, cover)) {
		if err := w.b.spill(w.rb); err != nil {
			return err
		}
		// Aggregate partials that hold half the budget are spilled too
		// (the merge combines the pieces of a key), and the buffer gives
		// back what the partials took since, so that the next run is at
		// least half the budget.
		if w.aggCharge > w.rb.limit/2 {
			if err := w.flushAggs(file); err != nil {
				return err
			}
		}
		w.rb.trim()
	}
	w.rb.add(bucket, key, file, rg, row, n, cover)
	w.emitted++
	return nil
}

// flushAggs emits the aggregate partials of file and empties them.
func (w *scanWorker) flushAggs(file int32) error {
	aggs := w.aggs
	w.aggs, w.aggCharge, w.rb.extra = map[string]*aggState{}, 0, 0
	for k, s := range aggs {
		key := []byte(k)
		if err := w.emit(w.bucket(key), key, file, aggRG, 0, 0, s.encode(w.b.def.Aggregates)); err != nil {
			return err
		}
	}
	return nil
}

func (w *scanWorker) bucket(key []byte) int32 {
	if w.b.def.Kind == KindSorted {
		return 0
	}
	return w.b.hash.bucket(key)
}

// aggStateBytes estimates the memory of one key's aggregate state.
func aggStateBytes(key []byte, aggs []Aggregate) int64 {
	return int64(len(key)) + 96 + 48*int64(len(aggs))
}

// scannedFile is a data file opened for a build: its footer read and
// checked, its key column found.
type scannedFile struct {
	f      *parquet.File
	o      object
	chk    *pqrow.Checker
	keyCol int
	class  KeyClass
}

// openScan reads one data file's footer and page locations into fe (size,
// ETag, footer CRC, rows) and finds its key column: the part of a build
// every engine shares (scanFile decodes the key column here, an
// EntryEngine reads it elsewhere).
func openScan(ctx context.Context, m *meter, res Resolver, def *Definition, fe *FileEntry, scanR, scanB *int64) (*scannedFile, error) {
	st, key, err := res.Resolve(ctx, fe.URI)
	if err != nil {
		return nil, err
	}
	o := object{st: st, key: key, uri: fe.URI}
	m.requests.Add(1)
	info, err := st.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	fe.Size, fe.ETag = info.Size, info.ETag
	fm, err := loadFileMeta(ctx, m, o, info.Size, 0, nil)
	if fce := (*FileChangedError)(nil); errors.As(err, &fce) {
		// Nothing was indexed from it yet: it is not Parquet, or a Parquet
		// file with corrupt parts, not a changed one.
		if strings.HasPrefix(fce.Reason, corruptReason) {
			return nil, aerr.CorruptDataFile(fe.URI, fmt.Errorf("%w: %s: %w", pqrow.ErrCorrupt, fce.Reason, fce.Err))
		}
		return nil, &NotParquetError{URI: fe.URI, Reason: fce.Reason, Err: fce.Err}
	}
	if err != nil {
		return nil, err
	}
	fe.ScannedPages = fm.scanned
	*scanR, *scanB = fm.scanRequests, fm.scanBytes
	fe.FooterCRC, fe.TailBytes, fe.TailRanges = fm.footerCRC, fm.tail, fm.tailRanges()
	// A co-grouping or blob marker that does not decode counts too: a
	// lookup of the key alone then reads the file and reports it.
	fe.Blocks = fm.coGroup != nil || fm.coGroupErr != nil || fm.blobErr != nil || fm.blob != nil && fm.blob.Blocks()
	fe.DictBytes = fm.dictBytes()
	// The handle with the offset indexes, as parquet-go reads the chunks.
	f, _, err := fm.seekable()
	if err != nil {
		return nil, aerr.CorruptDataFile(fe.URI, fmt.Errorf("%w: %sschema: %w", pqrow.ErrCorrupt, corruptReason, err))
	}
	// The footer is checked against itself, and every page decoded
	// against the footer: a file that lies is refused, never indexed with
	// made-up keys.
	chk, err := pqrow.NewChecker(f)
	if err != nil {
		return nil, aerr.CorruptDataFile(fe.URI, err)
	}
	fe.Rows = f.NumRows()
	keyCol, err := topLevelLeaf(f, fe.URI, def.Key)
	if err != nil {
		return nil, &unusableFile{err}
	}
	class, ok := classOfKind(f.Root().Column(def.Key).Type().Kind())
	if !ok {
		return nil, &unusableFile{&ColumnError{URI: fe.URI, Column: def.Key, Reason: "unsupported key type"}}
	}
	// Row group boundaries, for the local scan and an engine's runs alike.
	var rgStart int64
	for _, g := range f.RowGroups() {
		if g.NumRows() > math.MaxInt32 {
			return nil, &ColumnError{URI: fe.URI, Column: def.Key, Reason: "row group too large"}
		}
		fe.RowGroupStarts = append(fe.RowGroupStarts, rgStart)
		rgStart += g.NumRows()
	}
	return &scannedFile{f: f, o: o, chk: chk, keyCol: keyCol, class: class}, nil
}

// scanFile reads one data file's footer and page locations and scans its
// key, cover and aggregate columns a row group at a time, emitting the
// file's runs and per-key aggregate partials into the worker's buffer.
func (w *scanWorker) scanFile(ctx context.Context, m *meter, res Resolver, fe *FileEntry, scanR, scanB *int64) (KeyClass, error) {
	def := w.b.def
	sf, err := openScan(ctx, m, res, def, fe, scanR, scanB)
	if err != nil {
		return "", err
	}
	f, o, chk, keyCol, class := sf.f, sf.o, sf.chk, sf.keyCol, sf.class
	if len(def.Cover) > 0 || len(def.Aggregates) > 0 {
		// A stored row of a co-grouped blob is a block of rows: counts
		// and cover values per stored row would be wrong.
		if b, ok, _ := prepared.BlobOf(f); ok && b != nil && b.Blocks() {
			return "", &unusableFile{&ColumnError{URI: fe.URI, Column: b.Marker.Column, Reason: "co-grouped blob (" + prepared.BlobCodecZstdDict + ": a stored row per key): cover columns and aggregates cannot be built from it"}}
		}
		if _, ok := f.Lookup(prepared.CoGroupKey); ok {
			return "", &unusableFile{&ColumnError{URI: fe.URI, Column: def.Key, Reason: "co-grouped as nested lists (a stored row per key): cover columns and aggregates cannot be built from it"}}
		}
	}
	if kid := w.b.kid; kid != nil {
		if err := kid.openFile(w.file, fe, class); err != nil {
			return "", err
		}
	} else if part := w.b.part; part != nil {
		if err := part.openFile(w.file, fe, class); err != nil {
			return "", err
		}
		part.sampleFooter(f.Metadata(), keyCol)
	}
	// Columns decoded per row group: the key (as keys) at 0, then each
	// distinct cover or aggregate column (as hoisted values).
	cols := []int{keyCol}
	hoisted := func(c int) int {
		if i := slices.Index(cols[1:], c); i >= 0 {
			return i + 1
		}
		cols = append(cols, c)
		return len(cols) - 1
	}
	coverAt := make([]int, len(def.Cover))
	for i, c := range def.Cover {
		leaf, err := topLevelLeaf(f, fe.URI, c)
		if err != nil {
			return "", &unusableFile{err}
		}
		coverAt[i] = hoisted(leaf)
	}
	aggAt := make([]int, len(def.Aggregates))
	for i, a := range def.Aggregates {
		aggAt[i] = -1
		if a.Column != "" {
			leaf, err := topLevelLeaf(f, fe.URI, a.Column)
			if err != nil {
				return "", &unusableFile{err}
			}
			aggAt[i] = hoisted(leaf)
		}
	}
	for len(w.vals) < len(cols) {
		w.vals = append(w.vals, chunkValues{})
		w.decs = append(w.decs, chunkDecoder{key: len(w.decs) == 0})
	}
	w.aggVals = slices.Grow(w.aggVals[:0], len(def.Aggregates))[:len(def.Aggregates)]
	for rg, g := range f.RowGroups() {
		n := g.NumRows()
		if n == 0 {
			continue
		}
		md := &f.Metadata().RowGroups[rg]
		var rs []brange
		for _, c := range cols {
			cm := &md.Columns[c].MetaData
			s := cm.DataPageOffset
			if d := cm.DictionaryPageOffset; d > 0 && d < s {
				s = d
			}
			rs = append(rs, brange{s, s + cm.TotalCompressedSize})
		}
		var fs []*fetch
		for _, r := range coalesce(rs, buildGap) {
			fs = append(fs, &fetch{obj: o, r: r})
		}
		if err := fetchAll(ctx, m, fs, false); err != nil {
			return "", fileChanged(fe.URI, "read failed", err)
		}
		pr := &pageReader{ctx: ctx, m: m, obj: o, fallThrough: true}
		for _, x := range fs {
			pr.sp.add(span{x.r.off, x.data})
		}
		intPath := w.b.kid != nil || w.pw != nil
		for i, c := range cols {
			var err error
			if intPath && i == 0 {
				// A key-id path's int key, as words (intKeys).
				err = w.decs[0].decodeInts(g.ColumnChunks()[c], pr, n, &w.ints, chk.Chunk(rg, c))
			} else {
				err = w.decs[i].decode(g.ColumnChunks()[c], pr, n, &w.vals[i], chk.Chunk(rg, c))
			}
			if errors.Is(err, errKeyIDsFull) {
				return "", err
			}
			if err != nil {
				if ie := (*pqrow.IntegrityError)(nil); errors.As(err, &ie) {
					return "", aerr.CorruptDataFile(fe.URI, err)
				}
				return "", fmt.Errorf("rowindex: %s: row group %d column %d: %w", fe.URI, rg, c, err)
			}
		}
		if kid := w.b.kid; kid != nil {
			if err := kid.addGroup(w.file, fe.RowGroupStarts[rg], &w.ints, int(n)); err != nil {
				return "", err
			}
			w.emitted += n
		} else if w.pw != nil {
			if err := w.pw.addGroup(w.file, fe.RowGroupStarts[rg], &w.ints, int(n)); err != nil {
				return "", err
			}
			w.emitted += n
		} else if err := w.runs(fe.ID, int32(rg), int(n), coverAt, aggAt); err != nil {
			return "", err
		}
		w.b.rows.Add(n)
		w.countEntries()
	}
	// Aggregate partials per (key, data file), so that removing the file
	// removes exactly its contribution (see aggRG).
	if err := w.flushAggs(fe.ID); err != nil {
		return "", err
	}
	w.countEntries()
	w.b.dataBytes.Add(fe.Size)
	return class, nil
}

// runs emits the runs of equal consecutive keys of one decoded row group
// (one entry per run, cover values appended per row) and folds each row
// into its key's aggregate partials.
func (w *scanWorker) runs(file, rg int32, n int, coverAt, aggAt []int) error {
	def := w.b.def
	keys := &w.vals[0]
	var runKey []byte
	runStart, runN := -1, int64(0)
	flush := func() error {
		if runStart < 0 {
			return nil
		}
		return w.emit(w.bucket(runKey), runKey, file, rg, int64(runStart), runN, w.cover)
	}
	for i := range n {
		k := keys.row(i)
		if len(k) == 0 { // null key (encodings are never empty)
			if err := flush(); err != nil {
				return err
			}
			runStart = -1
			continue
		}
		if runStart < 0 || !bytes.Equal(k, runKey) {
			if err := flush(); err != nil {
				return err
			}
			runKey, runStart, runN, w.cover = k, i, 0, w.cover[:0]
		}
		runN++
		for _, c := range coverAt {
			w.cover = append(w.cover, w.vals[c].row(i)...)
		}
		if len(def.Aggregates) > 0 {
			s, ok := w.aggs[string(k)]
			if !ok {
				s = newAggState(def.Aggregates)
				w.aggs[string(k)] = s
				w.aggCharge += aggStateBytes(k, def.Aggregates)
				w.rb.extra = w.aggCharge
			}
			for j, c := range aggAt {
				if c >= 0 {
					v, err := decodeHoisted(w.vals[c].row(i))
					if err != nil {
						return err
					}
					w.aggVals[j] = v
				}
			}
			s.add(def.Aggregates, w.aggVals)
		}
	}
	return flush()
}

// decodeHoisted decodes one hoisted value (appendValue).
func decodeHoisted(b []byte) (any, error) {
	if len(b) == 0 {
		return nil, corrupt("empty hoisted value")
	}
	switch b[0] {
	case valNull:
		return nil, nil
	case valFalse:
		return false, nil
	case valTrue:
		return true, nil
	case valInt:
		i, n := binary.Varint(b[1:])
		if n <= 0 {
			return nil, corrupt("bad varint in hoisted value")
		}
		return i, nil
	case valFloat:
		if len(b) < 9 {
			return nil, corrupt("short float in hoisted value")
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b[1:])), nil
	case valString:
		l, n := binary.Uvarint(b[1:])
		if n <= 0 || uint64(len(b)-1-n) < l {
			return nil, corrupt("bad string in hoisted value")
		}
		return string(b[1+n : 1+n+int(l)]), nil
	}
	return nil, corrupt("bad tag %d in hoisted value", b[0])
}

// unusableFile wraps the error of a data file that lacks a column of the
// definition (or has it in an unusable shape), found before anything of
// the file was emitted: the build leaves the file out and records why
// (Manifest.Skipped) instead of failing every build from now on.
type unusableFile struct{ Err error }

func (u *unusableFile) Error() string { return u.Err.Error() }

// reason says what is wrong without repeating the file's URI.
func (u *unusableFile) reason() string {
	if ce := (*ColumnError)(nil); errors.As(u.Err, &ce) {
		return fmt.Sprintf("column %q: %s", ce.Column, ce.Reason)
	}
	return u.Err.Error()
}
func (u *unusableFile) Unwrap() error { return u.Err }
