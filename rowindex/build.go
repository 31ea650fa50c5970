package rowindex

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/store"
)

// Resolver resolves a data file URI ("s3://bucket/key", "file:///abs/path")
// to the store holding it and the key inside that store. The lead's
// *store.Resolver is expected to satisfy it; StoreResolver adapts a single
// store.
type Resolver interface {
	Resolve(ctx context.Context, uri string) (store.Store, string, error)
}

// StoreResolver resolves URIs that are keys of one store (as used by tests
// and the benchmark): the URI is the key.
type StoreResolver struct{ Store store.Store }

// Resolve returns the store and uri as the key.
func (r StoreResolver) Resolve(_ context.Context, uri string) (store.Store, string, error) {
	return r.Store, uri, nil
}

// BuildStats reports what a build read and wrote.
type BuildStats struct {
	Files      int   // data files indexed by this build
	Removed    int   // data files removed from the row index (UpdateAll)
	Rows       int64 // rows scanned
	Entries    int64 // entries written (runs + aggregate records)
	Fragments  int   // fragment files written
	IndexBytes int64 // bytes of fragments written
	DataBytes  int64 // bytes of the data files indexed
	Requests   int64 // storage requests issued (stats, footers, page indexes, key column chunks)
	BytesRead  int64
	// PageScanRequests and PageScanBytes are the part of Requests and
	// BytesRead spent building page locations for files without a page
	// index.
	PageScanRequests, PageScanBytes int64
	Elapsed                         time.Duration
	// Skipped are the files this build left out (see Manifest.Skipped).
	Skipped []SkippedFile
	// EngineFilesRead and EngineBytesRead are what an EntryEngine's scans
	// read (WithEngine; 0 when it reports nothing).
	EngineFilesRead, EngineBytesRead int64
	// KeyIDs reports that the entries were sorted in memory by dictionary
	// key ids (every row fit the memory budget at 8 bytes), not spilled in
	// sorted runs and merged.
	KeyIDs bool
	// Partitions is how many partition files the partitioned key-id path
	// wrote (0 when the build did not take it; see KeyIDs).
	Partitions int
}

// buildWorkers is how many data files a build scans at once (fewer under a
// small memory budget: each has its own sort buffer). Scanning is I/O bound
// on object storage (one footer read and one key-column read per row group,
// each a round trip), so a few files in flight hide latency; decoding is
// cheap next to it.
const buildWorkers = 8

// buildGap is the coalescing gap of the build's column-chunk reads: the key,
// cover and aggregate column chunks of one row group are read as one range
// when they are within 1 MiB of each other (see CoalesceGap).
const buildGap = 1 << 20

// Create builds a new row index named def.Name under the index folder idx
// over the data files uris, and commits its first manifest version. It
// returns ErrExists if the name is taken. opts set the build's memory
// budget, temporary folder and progress reports (see WithMemory).
func Create(ctx context.Context, idx store.Store, def Definition, res Resolver, uris []string, opts ...BuildOption) (*Manifest, BuildStats, error) {
	if err := def.Validate(); err != nil {
		return nil, BuildStats{}, err
	}
	m := new(meter)
	head, err := newestManifest(ctx, idx, def.Name, m)
	if err != nil {
		return nil, BuildStats{}, err
	}
	man := &Manifest{Version: 1, Definition: def}
	switch {
	case head == nil:
	case head.Dropped:
		man.Version = head.Version + 1 // after Drop's tombstone
		man.CreatedAt = man.Version
	default:
		return nil, BuildStats{}, fmt.Errorf("%w: %s", ErrExists, def.Name)
	}
	if def.Kind == KindHash {
		man.BucketHash = BucketFNV1aMix
	}
	st, err := build(ctx, idx, man, res, uris, opts...)
	if err != nil {
		return nil, st, err
	}
	if st.Files == 0 && len(st.Skipped) > 0 {
		// Not one file has the columns: most likely a misspelt key.
		s := st.Skipped[0]
		deleteFragments(ctx, idx, def.Name, man.Fragments)
		return nil, st, fmt.Errorf("%w: no data file can be indexed (%d skipped): %s: %s", ErrBadKeyColumn, len(st.Skipped), s.URI, s.Reason)
	}
	if err := commitManifest(ctx, idx, man); err != nil {
		return nil, st, err
	}
	return man, st, nil
}

// Update indexes the data files of uris that the row index does not list
// yet (by URI), appending fragments and committing the next manifest
// version; existing fragments are never rewritten. With no new file it
// commits nothing and returns the current manifest. A file removed earlier
// (Remove) and listed again is indexed afresh under a new id.
//
// Concurrent writers: if another writer commits first, Update re-applies its
// new files and fragments onto the newer version when that version allocated
// no file id meanwhile (a Remove or a Compact), so both land; against a
// concurrent Update or Create of files it returns ErrConcurrentUpdate and
// deletes the fragments it wrote.
func Update(ctx context.Context, idx store.Store, name string, res Resolver, uris []string, opts ...BuildOption) (*Manifest, BuildStats, error) {
	m := new(meter)
	cur, err := loadManifest(ctx, idx, name, m)
	if err != nil {
		return nil, BuildStats{}, err
	}
	known := map[string]bool{}
	for _, f := range cur.Files {
		known[f.URI] = true
	}
	for _, f := range cur.Skipped {
		known[f.URI] = true // recorded as unusable: not read again
	}
	var add []string
	for _, u := range uris {
		if !known[u] {
			add = append(add, u)
			known[u] = true
		}
	}
	if len(add) == 0 {
		return cur, BuildStats{}, nil
	}
	man := cur.clone()
	man.Version++
	st, err := build(ctx, idx, man, res, add, opts...)
	if err != nil {
		return nil, st, err
	}
	for attempt := 1; ; attempt++ {
		err = commitManifest(ctx, idx, man)
		if !errors.Is(err, ErrConcurrentUpdate) || attempt == commitAttempts {
			break
		}
		head, lerr := loadManifest(ctx, idx, name, m)
		if lerr != nil {
			err = errors.Join(err, lerr)
			break
		}
		next, ok := rebase(head, cur, man)
		if !ok {
			break
		}
		// man is now head plus what this Update adds: the base of the
		// next rebase is head, not the version Update started from.
		cur, man = head, next
	}
	if err != nil {
		abandonFragments(ctx, idx, name, man.Fragments[len(man.Fragments)-st.Fragments:], err)
		return nil, st, err
	}
	return man, st, nil
}

// commitAttempts bounds the commits of one Update or Remove that lose the
// race to other writers. Each retry costs a list, a manifest read and a
// put-if-absent (three round trips); losing eight in a row means at least
// eight other commits within those round trips, a contention that calls for
// coordinating the writers rather than retrying longer.
const commitAttempts = 8

// rebase re-applies what man added to base (data files with ids from
// base.NextFileID on, and fragments) onto head, a newer version committed by
// another writer. It fails when head allocated file ids since base (another
// Update or Create indexed files): the ids man used may be taken; and when
// head is another incarnation of the name (dropped and created again since
// base): the fragments man wrote may be deleted.
func rebase(head, base, man *Manifest) (*Manifest, bool) {
	if head.NextFileID != base.NextFileID || head.KeyClass != base.KeyClass || head.CreatedAt != base.CreatedAt {
		return nil, false
	}
	next := head.clone()
	next.Version = head.Version + 1
	next.KeyClass = man.KeyClass
	next.Files = append(next.Files, man.Files[len(base.Files):]...)
	next.Skipped = append(next.Skipped, man.Skipped[len(base.Skipped):]...)
	next.Fragments = append(next.Fragments, man.Fragments[len(base.Fragments):]...)
	next.NextFileID = man.NextFileID
	return next, true
}

// abandonFragments deletes the fragments whose commit failed with
// commitErr, unless that commit may have landed after all: a store error
// other than losing the race (a lost reply, a timeout) leaves them, and so
// does a newest manifest that lists them (a retried put-if-absent whose
// first try landed reports the precondition failure of its own write). A
// fragment left behind costs space; deleting a listed one would break the
// row index.
func abandonFragments(ctx context.Context, idx store.Store, name string, frags []FragmentEntry, commitErr error) {
	if !errors.Is(commitErr, ErrConcurrentUpdate) {
		return
	}
	head, err := loadManifest(context.WithoutCancel(ctx), idx, name, new(meter))
	if err != nil {
		return
	}
	mine := make(map[string]bool, len(frags))
	for _, f := range frags {
		mine[f.Path] = true
	}
	for _, f := range head.Fragments {
		if mine[f.Path] {
			return
		}
	}
	deleteFragments(ctx, idx, name, frags)
}

// deleteFragments deletes fragment files that no committed manifest lists
// (best effort: an orphan costs space only).
func deleteFragments(ctx context.Context, idx store.Store, name string, frags []FragmentEntry) {
	for _, f := range frags {
		_ = idx.Delete(context.WithoutCancel(ctx), folderOf(name)+f.Path, nil)
	}
}

// BuildOption tunes a build (Create, Update, UpdateAll).
type BuildOption func(*buildConfig)

type buildConfig struct {
	memory   int64
	tempDir  string
	progress func(BuildProgress)
	// engine, when set, computes the key runs (WithEngine).
	engine         EntryEngine
	engineBatch    int
	engineOptional bool // WithEngineWhereSupported
	// noKeyIDs turns the key-id path off (keyids.go), so that tests can
	// compare its fragments with the run path's.
	noKeyIDs bool
	// partitioned takes the partitioned key-id path (partitions.go)
	// instead of the key-id path: set when the key ids outgrow the budget.
	partitioned bool
	// onPartition, if set, is called as the partitioned path starts
	// sorting each partition (tests stop a build there).
	onPartition func(p *partitions, i int)
}

// DefaultBuildMemory is a build's default memory budget (WithMemory).
const DefaultBuildMemory = 512 << 20

// WithMemory sets the memory budget of a build in bytes (default
// DefaultBuildMemory; values ≤ 0 mean the default). Entries are sorted in
// buffers within the budget and spilled to temporary files as sorted runs,
// which are merged into fragments; a build of any size holds about the
// budget (plus buildOverhead for scan buffers, the fragment writer and the
// Go runtime).
func WithMemory(bytes int64) BuildOption {
	return func(c *buildConfig) {
		if bytes > 0 {
			c.memory = bytes
		}
	}
}

// WithTempDir sets the folder in which a build creates its temporary folder
// for spilled runs and fragments being written (default os.TempDir()). The
// temporary folder is removed when the build returns.
func WithTempDir(dir string) BuildOption { return func(c *buildConfig) { c.tempDir = dir } }

// WithProgress makes a build report its progress to fn, about every
// progressEvery and at the end of each phase. fn is called from one
// goroutine at a time.
func WithProgress(fn func(BuildProgress)) BuildOption {
	return func(c *buildConfig) { c.progress = fn }
}

func newBuildConfig(opts []BuildOption) buildConfig {
	c := buildConfig{memory: DefaultBuildMemory}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// BuildProgress is a snapshot of a build.
type BuildProgress struct {
	Phase      string // "scan" (reading data files), "merge" (writing fragments) or "done"
	Files      int    // data files to scan
	FilesDone  int    // data files scanned
	Rows       int64  // rows scanned
	DataBytes  int64  // bytes of the data files scanned
	Entries    int64  // entries produced (scan) or written (merge, done)
	Runs       int    // sorted runs spilled to temporary files
	Partitions int    // partition files of the partitioned key-id path
	SpillBytes int64  // bytes of the spilled runs and partition files
	Fragments  int    // fragment files written
	IndexBytes int64  // bytes of the fragments written
	Elapsed    time.Duration
}

// progressEvery spaces a build's progress reports.
const progressEvery = time.Second

// build scans uris, adds them to man.Files and their fragments to
// man.Fragments. It takes the first path that can build the index within
// the budget: the key-id path, the partitioned key-id path, the run path.
// A path that finds it cannot (errKeyIDsFull: rows or keys past the
// budget, a key other than int) hands over to the next, which scans again;
// the reads of every scan count (BuildStats.Requests).
func build(ctx context.Context, idx store.Store, man *Manifest, res Resolver, uris []string, opts ...BuildOption) (BuildStats, error) {
	start := time.Now()
	cfg := newBuildConfig(opts)
	m := new(meter)
	tmp, err := newSpillDir(cfg.tempDir)
	if err != nil {
		return BuildStats{}, err
	}
	defer tmp.remove()
	files, skipped, class, next := len(man.Files), len(man.Skipped), man.KeyClass, man.NextFileID
	for {
		st, err := buildOnce(ctx, idx, man, res, uris, cfg, m, tmp, start)
		if !errors.Is(err, errKeyIDsFull) || cfg.noKeyIDs {
			return st, err
		}
		// The next path starts from the manifest as it was.
		man.Files, man.Skipped, man.KeyClass, man.NextFileID = man.Files[:files], man.Skipped[:skipped], class, next
		if cfg.partitioned {
			cfg.noKeyIDs = true
		} else {
			cfg.partitioned = true
		}
	}
}

// buildOnce is build on one path (cfg).
func buildOnce(ctx context.Context, idx store.Store, man *Manifest, res Resolver, uris []string, cfg buildConfig, m *meter, tmp *spillDir, start time.Time) (BuildStats, error) {
	var st BuildStats
	b := newBuilder(cfg, &man.Definition, man.BucketHash, tmp, len(uris), start)
	stop := b.reportEvery(progressEvery)
	defer stop()
	if b.part != nil {
		defer b.part.close()
	}

	scan := b.scanAll
	if cfg.engine != nil {
		scan = b.scanOn
	}
	results, err := scan(ctx, m, res, man.NextFileID, uris)
	if errors.Is(err, errEngineUnsupported) {
		// Before any run was emitted: the local scan builds it.
		results, err = b.scanAll(ctx, m, res, man.NextFileID, uris)
	}
	if (b.kid != nil || b.part != nil) && keyIDsFull(results, err) {
		// More rows or keys than the path holds within the budget (it
		// stops as soon as a file's footer shows it). The reads of the
		// scan stopped were issued: m keeps counting them.
		return st, errKeyIDsFull
	}
	if err != nil {
		return st, err
	}
	if b.part != nil {
		if ok, _ := b.part.fits(); !ok {
			return st, errKeyIDsFull
		}
		st.Partitions = b.part.n
	}
	st.KeyIDs = b.kid != nil || b.part != nil
	for i := range results {
		r := &results[i]
		if r.err != nil {
			return st, r.err
		}
		if r.skip != "" {
			s := SkippedFile{URI: r.fe.URI, Reason: r.skip}
			man.Skipped = append(man.Skipped, s)
			st.Skipped = append(st.Skipped, s)
			continue
		}
		if man.KeyClass == "" {
			man.KeyClass = r.class
		} else if r.class != "" && r.class != man.KeyClass {
			return st, &ColumnError{URI: r.fe.URI, Column: man.Key, Reason: fmt.Sprintf("key class %s, the row index has %s", r.class, man.KeyClass)}
		}
		man.Files = append(man.Files, r.fe)
		st.Files++
		st.Rows += r.fe.Rows
		st.DataBytes += r.fe.Size
		st.PageScanRequests += r.scanR
		st.PageScanBytes += r.scanB
	}
	man.NextFileID += int32(len(uris))
	frags, written, entries, err := b.merge(ctx, idx, man.Name, man.Kind, man.Aggregates)
	if err != nil {
		return st, err
	}
	man.Fragments = append(man.Fragments, frags...)
	st.Entries = entries
	st.Fragments = len(frags)
	st.IndexBytes = written
	st.Requests = m.requests.Load()
	st.BytesRead = m.bytes.Load()
	st.EngineFilesRead, st.EngineBytesRead = b.engineFiles.Load(), b.engineBytes.Load()
	st.Elapsed = time.Since(start)
	b.setPhase("done")
	return st, nil
}

// keyIDsFull reports whether a scan stopped because the key-id path
// outgrew its budget (in any file, or in the scan's own error).
func keyIDsFull(results []scanResult, err error) bool {
	if errors.Is(err, errKeyIDsFull) {
		return true
	}
	for i := range results {
		if errors.Is(results[i].err, errKeyIDsFull) {
			return true
		}
	}
	return false
}

// bucket returns the bucket of an encoded key under this manifest's kind.
func (m *Manifest) bucket(key []byte) int32 {
	if m.Kind == KindSorted {
		return 0
	}
	return m.BucketHash.bucket(key)
}

// topLevelLeaf returns the leaf column index of a top-level primitive,
// non-repeated column.
func topLevelLeaf(f *parquet.File, uri, name string) (int, error) {
	c := f.Root().Column(name)
	if c == nil {
		return 0, &ColumnError{URI: uri, Column: name, Reason: "no such column"}
	}
	if !c.Leaf() || c.MaxRepetitionLevel() > 0 {
		return 0, &ColumnError{URI: uri, Column: name, Reason: "not a top-level primitive, non-repeated column"}
	}
	return c.Index(), nil
}
