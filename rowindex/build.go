package rowindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
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
}

// buildWorkers is how many data files a build scans at once. Scanning is
// I/O bound on object storage (one footer read and one key-column read per
// row group, each a round trip), so a few files in flight hide latency;
// decoding is cheap next to it.
const buildWorkers = 8

// buildGap is the coalescing gap of the build's column-chunk reads: the key,
// cover and aggregate column chunks of one row group are read as one range
// when they are within 1 MiB of each other (see CoalesceGap).
const buildGap = 1 << 20

// Create builds a new row index named def.Name under the index folder idx
// over the data files uris, and commits its first manifest version. It
// returns ErrExists if the name is taken.
func Create(ctx context.Context, idx store.Store, def Definition, res Resolver, uris []string) (*Manifest, BuildStats, error) {
	if err := def.Validate(); err != nil {
		return nil, BuildStats{}, err
	}
	m := new(meter)
	v, err := latestVersion(ctx, idx, def.Name, m)
	if err != nil {
		return nil, BuildStats{}, err
	}
	if v > 0 {
		return nil, BuildStats{}, fmt.Errorf("%w: %s", ErrExists, def.Name)
	}
	man := &Manifest{Version: 1, Definition: def}
	st, err := build(ctx, idx, man, res, uris)
	if err != nil {
		return nil, st, err
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
func Update(ctx context.Context, idx store.Store, name string, res Resolver, uris []string) (*Manifest, BuildStats, error) {
	m := new(meter)
	cur, err := loadManifest(ctx, idx, name, m)
	if err != nil {
		return nil, BuildStats{}, err
	}
	known := map[string]bool{}
	for _, f := range cur.Files {
		known[f.URI] = true
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
	st, err := build(ctx, idx, man, res, add)
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
// Update or Create indexed files): the ids man used may be taken.
func rebase(head, base, man *Manifest) (*Manifest, bool) {
	if head.NextFileID != base.NextFileID || head.KeyClass != base.KeyClass {
		return nil, false
	}
	next := head.clone()
	next.Version = head.Version + 1
	next.KeyClass = man.KeyClass
	next.Files = append(next.Files, man.Files[len(base.Files):]...)
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

// build scans uris, adds them to man.Files and their fragments to
// man.Fragments.
func build(ctx context.Context, idx store.Store, man *Manifest, res Resolver, uris []string) (BuildStats, error) {
	start := time.Now()
	var st BuildStats
	m := new(meter)
	type result struct {
		fe    FileEntry
		es    []entry
		aggs  map[string]*aggState
		class KeyClass
		rows  int64
		scanR int64
		scanB int64
		err   error
	}
	results := make([]result, len(uris))
	var wg sync.WaitGroup
	sem := make(chan struct{}, buildWorkers)
	for i, uri := range uris {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := &results[i]
			r.fe.URI = uri
			r.fe.ID = man.NextFileID + int32(i)
			r.es, r.aggs, r.class, r.err = scanFile(ctx, m, res, &man.Definition, &r.fe, &r.scanR, &r.scanB)
		}()
	}
	wg.Wait()
	var es []entry
	for i := range results {
		r := &results[i]
		if r.err != nil {
			return st, r.err
		}
		if man.KeyClass == "" {
			man.KeyClass = r.class
		} else if r.class != "" && r.class != man.KeyClass {
			return st, &ColumnError{URI: r.fe.URI, Column: man.Key, Reason: fmt.Sprintf("key class %s, the row index has %s", r.class, man.KeyClass)}
		}
		man.Files = append(man.Files, r.fe)
		es = append(es, r.es...)
		// Aggregate partials per (key, data file), so that removing the
		// file removes exactly its contribution (see aggRG).
		for k, s := range r.aggs {
			key := []byte(k)
			es = append(es, entry{Bucket: man.bucket(key), Key: key, File: r.fe.ID, RG: aggRG, Cover: s.encode(man.Aggregates)})
		}
		st.Files++
		st.Rows += r.fe.Rows
		st.DataBytes += r.fe.Size
		st.PageScanRequests += r.scanR
		st.PageScanBytes += r.scanB
	}
	man.NextFileID += int32(len(uris))
	slices.SortFunc(es, func(a, b entry) int { return compareEntries(&a, &b) })
	frags, written, err := writeFragments(ctx, idx, man.Name, man.Kind, es)
	if err != nil {
		return st, err
	}
	man.Fragments = append(man.Fragments, frags...)
	st.Entries = int64(len(es))
	st.Fragments = len(frags)
	st.IndexBytes = written
	st.Requests = m.requests.Load()
	st.BytesRead = m.bytes.Load()
	st.Elapsed = time.Since(start)
	return st, nil
}

// bucket returns the bucket of an encoded key under this manifest's kind.
func (m *Manifest) bucket(key []byte) int32 {
	if m.Kind == KindSorted {
		return 0
	}
	return bucketOf(key)
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

// scanFile reads one data file's footer and page locations and scans its
// key, cover and aggregate columns, returning the file's runs and per-key
// aggregate partials.
func scanFile(ctx context.Context, m *meter, res Resolver, def *Definition, fe *FileEntry, scanR, scanB *int64) ([]entry, map[string]*aggState, KeyClass, error) {
	st, key, err := res.Resolve(ctx, fe.URI)
	if err != nil {
		return nil, nil, "", err
	}
	o := object{st: st, key: key, uri: fe.URI}
	m.requests.Add(1)
	info, err := st.Stat(ctx, key)
	if err != nil {
		return nil, nil, "", err
	}
	fe.Size, fe.ETag = info.Size, info.ETag
	fm, err := loadFileMeta(ctx, m, o, info.Size, 0, nil)
	if err != nil {
		return nil, nil, "", err
	}
	fe.ScannedPages = fm.scanned
	*scanR, *scanB = fm.scanRequests, fm.scanBytes
	fe.FooterCRC, fe.TailBytes = fm.footerCRC, fm.tail
	f := fm.f
	fe.Rows = f.NumRows()
	keyCol, err := topLevelLeaf(f, fe.URI, def.Key)
	if err != nil {
		return nil, nil, "", err
	}
	class, ok := classOfKind(f.Root().Column(def.Key).Type().Kind())
	if !ok {
		return nil, nil, "", &ColumnError{URI: fe.URI, Column: def.Key, Reason: "unsupported key type"}
	}
	coverCols := make([]int, len(def.Cover))
	for i, c := range def.Cover {
		if coverCols[i], err = topLevelLeaf(f, fe.URI, c); err != nil {
			return nil, nil, "", err
		}
	}
	aggCols := make([]int, len(def.Aggregates))
	for i, a := range def.Aggregates {
		aggCols[i] = -1
		if a.Column != "" {
			if aggCols[i], err = topLevelLeaf(f, fe.URI, a.Column); err != nil {
				return nil, nil, "", err
			}
		}
	}
	needed := []int{keyCol}
	for _, c := range append(slices.Clone(coverCols), aggCols...) {
		if c >= 0 && !slices.Contains(needed, c) {
			needed = append(needed, c)
		}
	}
	var es []entry
	aggs := map[string]*aggState{}
	ncol := fm.ncol()
	var rgStart int64
	for rg, g := range f.RowGroups() {
		fe.RowGroupStarts = append(fe.RowGroupStarts, rgStart)
		n := g.NumRows()
		rgStart += n
		if n == 0 {
			continue
		}
		md := &f.Metadata().RowGroups[rg]
		var rs []brange
		for _, c := range needed {
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
		if err := fetchAll(ctx, m, fs); err != nil {
			return nil, nil, "", &FileChangedError{URI: fe.URI, Reason: "read failed", Err: err}
		}
		pr := &pageReader{ctx: ctx, m: m, obj: o, fallThrough: true}
		for _, x := range fs {
			pr.sp.add(span{x.r.off, x.data})
		}
		cols := map[int][][]parquet.Value{}
		for _, c := range needed {
			if cols[c], err = readColumn(g.ColumnChunks()[c], pr, 0, n, fm.aligned[rg*ncol+c]); err != nil {
				return nil, nil, "", fmt.Errorf("rowindex: %s: row group %d column %d: %w", fe.URI, rg, c, err)
			}
		}
		keys := cols[keyCol]
		run := -1 // index in es of the current run
		var kbuf []byte
		aggVals := make([]any, len(def.Aggregates))
		for i := range n {
			v := keys[i][0]
			if v.IsNull() {
				run = -1
				continue
			}
			kbuf = appendKeyValue(kbuf[:0], v)
			if run < 0 || !bytes.Equal(es[run].Key, kbuf) {
				es = append(es, entry{Key: bytes.Clone(kbuf), File: fe.ID, RG: int32(rg), Row: i})
				run = len(es) - 1
			}
			e := &es[run]
			e.N++
			for _, c := range coverCols {
				e.Cover = appendValue(e.Cover, valueOf(cols[c][i][0]))
			}
			if len(def.Aggregates) > 0 {
				s, ok := aggs[string(e.Key)]
				if !ok {
					s = newAggState(def.Aggregates)
					aggs[string(e.Key)] = s
				}
				for j, c := range aggCols {
					if c >= 0 {
						aggVals[j] = valueOf(cols[c][i][0])
					}
				}
				s.add(def.Aggregates, aggVals)
			}
		}
	}
	kind := def.Kind
	for i := range es {
		if kind == KindSorted {
			es[i].Bucket = 0
		} else {
			es[i].Bucket = bucketOf(es[i].Key)
		}
	}
	return es, aggs, class, nil
}
