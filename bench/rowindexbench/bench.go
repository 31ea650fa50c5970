package rowindexbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/bench/duckdb"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

// Config configures Run on a generated lake. Zero fields take defaults.
type Config struct {
	// Dir holds the lake (Dir/lake, generated once and reused while its
	// config is unchanged) and the index (Dir/index, rebuilt every run).
	Dir string
	// Layout is one of Layouts (default LayoutSorted); SizeMB the lake's
	// size (default DefaultSizeMB). Lake, if its TargetBytes is set,
	// replaces the lake LakeConfig(Layout, SizeMB) gives.
	Layout string
	SizeMB int
	Lake   lakegen.Config
	// FrameMinBytes, with LayoutFramed, is prepare's --frame-min-bytes
	// (0: a frame per key; nil: prepared.DefaultMinFrameBytes). Each
	// setting is prepared into Dir/lake anew (the source is kept).
	FrameMinBytes *int
	// Kind is the kind of the row index the lookups use (default sorted).
	// The other kind is built too, for its size.
	Kind rowindex.Kind
	// Classes configures the per key class measurement.
	Classes ClassConfig
	// Overview adds the system table: the standard parquet-go reader and
	// the row index cold and warm, on local disk and behind each of
	// Latencies (default 2 ms and 20 ms), Lookups keys on local disk
	// (default 200) and LatencyLookups behind latency (default 50), and
	// covered lookups.
	Overview                bool
	Lookups, LatencyLookups int
	Latencies               []time.Duration
	// Progress, if set, receives progress lines.
	Progress io.Writer
}

// ClassConfig configures the per key class measurement. Zero fields take
// defaults.
type ClassConfig struct {
	// KeysPerClass is the number of keys drawn per class and sampling
	// (default 20); TopRepeats the lookups of the top key, with and without
	// the limit (default 5); Limit the limit of the limited top-key lookups
	// (default 100).
	KeysPerClass, TopRepeats, Limit int
	// Timeout, if set, cuts each lookup of either system (the lookup counts
	// as a timeout at that time). Budget, if set, stops drawing keys of a
	// class once both systems together spent that long on it.
	Timeout, Budget time.Duration
	// Seed makes the key draw reproducible (default 1).
	Seed uint64
	// ResidentBytes is the warm handle's budget of resident fragment
	// groups (rowindex.Options.ResidentBytes: 0 sized to the index,
	// negative none).
	ResidentBytes int64
	// ShapeBytes is the warm handle's budget of page shapes learnt by
	// reading every page lookups may read in parts once
	// (rowindex.Options.ShapeBytes: 0 rowindex.DefaultShapeBytes, the pages
	// read only of files on local stores; negative none).
	ShapeBytes int64
	// Only, if set, names the classes to measure (Class.Name, ClassAll,
	// ClassTop); the others are skipped, keys still drawn so a class gets
	// the keys it gets in a full run.
	Only []string
}

// Check reports a name in Only that is no class.
func (c ClassConfig) Check() error {
	for _, name := range c.Only {
		if name != ClassAll && name != ClassTop && !slices.ContainsFunc(Classes, func(k Class) bool { return k.Name == name }) {
			return aerr.Invalid("class %q: want one of %v, %q or %q", name, classNames(), ClassAll, ClassTop)
		}
	}
	return nil
}

func classNames() []string {
	var out []string
	for _, k := range Classes {
		out = append(out, k.Name)
	}
	return out
}

func (c *ClassConfig) defaults() {
	if c.KeysPerClass <= 0 {
		c.KeysPerClass = 20
	}
	if c.TopRepeats <= 0 {
		c.TopRepeats = 5
	}
	if c.Limit <= 0 {
		c.Limit = 100
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
}

func (c *Config) defaults() error {
	if c.Layout == "" {
		c.Layout = LayoutSorted
	}
	if c.Lake.TargetBytes == 0 {
		lake, err := LakeConfig(c.Layout, c.SizeMB)
		if err != nil {
			return err
		}
		c.Lake = lake
	}
	if c.Kind == "" {
		c.Kind = rowindex.KindSorted
	}
	if c.Lookups == 0 {
		c.Lookups = 200
	}
	if c.LatencyLookups == 0 {
		c.LatencyLookups = 50
	}
	if c.Latencies == nil {
		c.Latencies = []time.Duration{2 * time.Millisecond, 20 * time.Millisecond}
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	c.Classes.defaults()
	return nil
}

// minFrame is the framed layout's minimum frame bytes.
func (c *Config) minFrame() int {
	if c.FrameMinBytes == nil {
		return prepared.DefaultMinFrameBytes
	}
	return *c.FrameMinBytes
}

// keyColumn is the generated lakes' key.
const keyColumn = "user_id"

// Run generates (or reuses) a lake, builds a row index on user_id and
// measures lookups per key class against DuckDB on the same files, and, with
// Overview, the system table. Every system must return, for every key, the
// number of rows a scan of the key column counted, or Run fails.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if cfg.Overview && cfg.Layout == LayoutCoGrouped {
		// The overview's standard reader returns stored rows: key blocks.
		return nil, aerr.Invalid("the overview does not measure layout %s (its stored rows are key blocks)", LayoutCoGrouped)
	}
	lakeDir := filepath.Join(cfg.Dir, "lake")
	var uris, refPaths []string
	var sourceBytes int64
	var rowsFrom *keyFiles
	if sourced(cfg.Layout) {
		// The source lake, then its prepare; DuckDB on the source is
		// the reference.
		srcDir := filepath.Join(cfg.Dir, "source")
		src, err := lakegen.Ensure(ctx, srcDir, cfg.Lake, cfg.Progress)
		if err != nil {
			return nil, err
		}
		for _, f := range src {
			refPaths = append(refPaths, filepath.Join(srcDir, filepath.FromSlash(f.Key)))
			sourceBytes += f.Size
		}
		cogrouped := cfg.Layout == LayoutCoGrouped
		if uris, err = ensureFramed(ctx, srcDir, lakeDir, cfg.Lake, cfg.minFrame(), cogrouped, cfg.Progress); err != nil {
			return nil, err
		}
		if cogrouped {
			st, err := store.Open(ctx, "file://"+srcDir)
			if err != nil {
				return nil, err
			}
			defer st.Close()
			rowsFrom = &keyFiles{st: st}
			for _, f := range src {
				rowsFrom.uris = append(rowsFrom.uris, f.Key)
			}
		}
	} else {
		files, err := lakegen.Ensure(ctx, lakeDir, cfg.Lake, cfg.Progress)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			uris = append(uris, f.Key)
		}
	}
	local, err := store.Open(ctx, "file://"+lakeDir)
	if err != nil {
		return nil, err
	}
	defer local.Close()
	idxDir := filepath.Join(cfg.Dir, "index")
	if err := os.RemoveAll(idxDir); err != nil {
		return nil, err
	}
	idx, err := store.Open(ctx, "file://"+idxDir)
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	rep := &Report{Layout: cfg.Layout, Description: describe(cfg.Layout, cfg.Lake, cfg.minFrame())}
	rep.Lake.SourceBytes = sourceBytes
	rep.Lake.ZipfTopShare = lakegen.TopShare(cfg.Lake)
	lk := lakeRun{data: local, lakeDir: lakeDir, uris: uris, keyCol: keyColumn, idx: idx, kind: cfg.Kind, progress: cfg.Progress,
		refPaths: refPaths, rowsFrom: rowsFrom}
	h, err := lk.prepare(ctx, rep)
	if err != nil {
		return nil, err
	}
	if cfg.Overview {
		if err := overview(ctx, cfg, lk, h, rep); err != nil {
			return nil, err
		}
	}
	if rep.Classes, err = lk.classes(ctx, cfg.Classes, h, &rep.Index); err != nil {
		return nil, err
	}
	return rep, nil
}

// lakeRun is one measured lake: its files and the row index over them.
type lakeRun struct {
	data     store.Store // the files, local
	lakeDir  string      // data's folder
	uris     []string    // keys of data
	keyCol   string
	idx      store.Store // the index folder
	kind     rowindex.Kind
	progress io.Writer
	// refPaths, if set, are the same rows in other files (the framed
	// layout's unprepared source), where DuckDB is timed too, for
	// reference.
	refPaths []string
	// rowsFrom, if set, are the files whose key column counts the rows
	// (LayoutCoGrouped's source): data's stored rows are key blocks.
	rowsFrom *keyFiles
}

// keyFiles are files in a store.
type keyFiles struct {
	st   store.Store
	uris []string
}

// indexName is the row index the lookups use.
const indexName = "bench"

func (lk lakeRun) paths() []string {
	var out []string
	for _, u := range lk.uris {
		out = append(out, filepath.Join(lk.lakeDir, filepath.FromSlash(u)))
	}
	return out
}

// prepare describes the lake, counts its keys and builds both kinds of row
// index (the lookups use lk.kind).
func (lk lakeRun) prepare(ctx context.Context, rep *Report) (*histogram, error) {
	if err := describeFiles(ctx, lk.data, lk.uris, lk.keyCol, &rep.Lake); err != nil {
		return nil, err
	}
	rep.Lake.Dir, rep.Lake.KeyColumn = lk.lakeDir, lk.keyCol
	fmt.Fprintf(lk.progress, "counting the keys of %s in %d files...\n", lk.keyCol, len(lk.uris))
	h, err := scanKeys(ctx, lk.data, lk.uris, lk.keyCol)
	if err != nil {
		return nil, err
	}
	if lk.rowsFrom != nil {
		// The rows are counted in the source; data's counts are the
		// stored rows DuckDB returns from the prepared files.
		stored := h
		if h, err = scanKeys(ctx, lk.rowsFrom.st, lk.rowsFrom.uris, lk.keyCol); err != nil {
			return nil, err
		}
		h.stored = stored.exact
		rep.Lake.StoredRows, rep.Lake.Rows = rep.Lake.Rows, h.rows
	}
	if h.rows == 0 {
		return nil, fmt.Errorf("rowindexbench: column %s holds no non-null key", lk.keyCol)
	}
	rep.Lake.DistinctKeys, rep.Lake.TopKeyRows = len(h.keys), h.counts[0]
	rep.Lake.TopKeyShare = float64(h.counts[0]) / float64(rep.Lake.Rows)

	res := rowindex.StoreResolver{Store: lk.data}
	fmt.Fprintf(lk.progress, "building the %s row index...\n", lk.kind)
	start := time.Now()
	man, bs, err := rowindex.Create(ctx, lk.idx, rowindex.Definition{Name: indexName, Key: lk.keyCol, Kind: lk.kind}, res, lk.uris)
	if err != nil {
		return nil, err
	}
	rep.Index = Index{Kind: lk.kind, Entries: man.Entries(), Bytes: man.IndexBytes(), BuildMS: ms(time.Since(start)),
		BuildRequests: bs.Requests, BuildBytes: bs.BytesRead}
	rep.Index.Sizes = append(rep.Index.Sizes, IndexSize{lk.kind, man.Entries(), man.IndexBytes()})
	other := rowindex.KindHash
	if lk.kind == rowindex.KindHash {
		other = rowindex.KindSorted
	}
	fmt.Fprintf(lk.progress, "building the %s row index, for its size...\n", other)
	om, _, err := rowindex.Create(ctx, lk.idx, rowindex.Definition{Name: indexName + "_" + string(other), Key: lk.keyCol, Kind: other}, res, lk.uris)
	if err != nil {
		return nil, err
	}
	rep.Index.Sizes = append(rep.Index.Sizes, IndexSize{other, om.Entries(), om.IndexBytes()})
	return h, nil
}

// describeFiles fills the file-level facts of l from the files' footers.
func describeFiles(ctx context.Context, st store.Store, uris []string, keyCol string, l *Lake) error {
	l.Files, l.PageIndex = len(uris), true
	codecs := map[string]bool{}
	for _, u := range uris {
		attrs, err := st.Stat(ctx, u)
		if err != nil {
			return err
		}
		f, err := parquet.OpenFile(store.NewReaderAt(ctx, st, u, attrs.Size), attrs.Size, parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
		if err != nil {
			return fmt.Errorf("%s: %w", u, err)
		}
		l.DataBytes += attrs.Size
		l.Rows += f.NumRows()
		col := f.Root().Column(keyCol)
		if col == nil {
			return fmt.Errorf("rowindexbench: %s has no column %q", u, keyCol)
		}
		for _, g := range f.Metadata().RowGroups {
			l.RowGroups++
			cc := g.Columns[col.Index()]
			if cc.OffsetIndexOffset == 0 {
				l.PageIndex = false
			}
			codecs[cc.MetaData.Codec.String()] = true
		}
	}
	l.Compression = strings.Join(slices.Sorted(maps.Keys(codecs)), ",")
	return nil
}

// classes measures every key class under both samplings, the top key and
// the top key with a limit, through a warm row index and DuckDB.
func (lk lakeRun) classes(ctx context.Context, cfg ClassConfig, h *histogram, ix *Index) ([]ClassResult, error) {
	ri, err := rowindex.Open(ctx, lk.idx, indexName, rowindex.Options{Resolver: rowindex.StoreResolver{Store: lk.data}, ResidentBytes: cfg.ResidentBytes, ShapeBytes: cfg.ShapeBytes})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if _, err := ri.Warm(ctx); err != nil {
		return nil, err
	}
	ix.WarmMS = float64(time.Since(start).Microseconds()) / 1e3
	ix.ResidentGroups, ix.Groups, ix.ResidentBytes = ri.ResidentGroups()
	ix.ShapePages, ix.ShapeBytes = ri.LearntShapes()
	ix.CacheBytes, _ = ri.CacheStats()
	eng, err := duckdb.Open(ctx, lk.paths(), lk.keyCol)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	m := &measurer{ri: ri, eng: eng, h: h, cfg: cfg, progress: lk.progress}
	if len(lk.refPaths) > 0 {
		if m.ref, err = duckdb.Open(ctx, lk.refPaths, lk.keyCol); err != nil {
			return nil, err
		}
		defer m.ref.Close()
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 11))
	n := cfg.KeysPerClass
	// Untimed first lookups: DuckDB's first query and the row index's
	// first data reads pay one-off setup.
	if _, err := m.measure(ctx, SamplingFixed, "warm-up", h.sample(rng, 0, len(h.keys), 3, SamplingDistinct), 0); err != nil {
		return nil, err
	}
	var out []ClassResult
	add := func(sampling, class string, keys []any, limit int) error {
		if len(keys) == 0 || len(cfg.Only) > 0 && !slices.Contains(cfg.Only, class) {
			return nil
		}
		r, err := m.measure(ctx, sampling, class, keys, limit)
		if err == nil {
			out = append(out, r)
		}
		return err
	}
	if err := add(SamplingFixed, Classes[0].Name, h.absent(rng, n), 0); err != nil {
		return nil, err
	}
	for _, s := range []string{SamplingRows, SamplingDistinct} {
		for _, c := range Classes[1:] {
			lo, hi := h.span(c)
			if err := add(s, c.Name, h.sample(rng, lo, hi, n, s), 0); err != nil {
				return nil, err
			}
		}
		if err := add(s, ClassAll, h.sample(rng, 0, len(h.keys), n, s), 0); err != nil {
			return nil, err
		}
	}
	top := slices.Repeat([]any{h.keys[0]}, cfg.TopRepeats)
	if err := add(SamplingFixed, ClassTop, top, cfg.Limit); err != nil {
		return nil, err
	}
	if err := add(SamplingFixed, ClassTop, top, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// measurer times both systems on keys and checks their row counts.
type measurer struct {
	ri       *rowindex.RowIndex
	eng      *duckdb.Engine
	ref      *duckdb.Engine // DuckDB on the reference files, or nil
	h        *histogram
	cfg      ClassConfig
	progress io.Writer
}

// measure looks every key up in both systems, one after the other (the row
// index first for every other key, DuckDB first for the rest), until the
// class budget is spent.
func (m *measurer) measure(ctx context.Context, sampling, class string, keys []any, limit int) (ClassResult, error) {
	res := ClassResult{Sampling: sampling, Class: class, Limit: limit}
	fmt.Fprintf(m.progress, "class %s (%s sampling, limit %d): %d keys...\n", class, sampling, limit, len(keys))
	var ours, theirs, ref []time.Duration
	var oursOut, theirsOut, refOut int
	var spent time.Duration
	distinct := map[any]bool{}
	for i, k := range keys {
		if m.cfg.Budget > 0 && spent > m.cfg.Budget {
			break
		}
		want := m.h.exact[k]
		if limit > 0 {
			want = min(want, int64(limit))
		}
		q := m.h.queryValue(k)
		oursOnce := func() error {
			d, r, cut, err := timed(ctx, m.cfg.Timeout, func(ctx context.Context) (streamed, error) {
				return streamRows(ctx, m.ri, rowindex.Query{Key: q, Limit: limit})
			})
			switch {
			case cut:
				oursOut++
			case err != nil:
				return fmt.Errorf("rowindexbench: row index, key %v: %w", k, err)
			case r.rows != want:
				return fmt.Errorf("rowindexbench: the row index returned %d rows for key %v, the scan counted %d", r.rows, k, want)
			default:
				res.RequestsPerLookup += float64(r.plan.Requests())
				res.BytesPerLookup += float64(r.plan.BytesRead())
			}
			ours = append(ours, d)
			spent += d
			return nil
		}
		// duckOnce times one DuckDB lookup of the key on eng (named what in
		// errors), which must return want rows.
		duckOnce := func(eng *duckdb.Engine, what string, want int64, ds *[]time.Duration, out *int) error {
			d, n, cut, err := timed(ctx, m.cfg.Timeout, func(ctx context.Context) (int, error) { return eng.Count(ctx, q, limit) })
			switch {
			case cut:
				*out++
			case err != nil:
				return fmt.Errorf("rowindexbench: %s, key %v: %w", what, k, err)
			case int64(n) != want:
				return fmt.Errorf("rowindexbench: %s returned %d rows for key %v, the scan counted %d", what, n, k, want)
			}
			*ds = append(*ds, d)
			spent += d
			return nil
		}
		theirsOnce := func() error {
			if err := duckOnce(m.eng, "DuckDB", m.h.storedRows(k, limit), &theirs, &theirsOut); err != nil || m.ref == nil {
				return err
			}
			return duckOnce(m.ref, "DuckDB on the reference files", want, &ref, &refOut)
		}
		// Every other key DuckDB goes first: whichever system reads a key
		// first brings its pages into the OS page cache for the other
		// (the first reads from disk where the cache was cold).
		first, second := oursOnce, theirsOnce
		if i%2 == 1 {
			first, second = theirsOnce, oursOnce
		}
		if err := first(); err != nil {
			return res, err
		}
		if err := second(); err != nil {
			return res, err
		}
		res.RowsPerLookup += float64(want)
		res.MaxRows = max(res.MaxRows, want)
		distinct[k] = true
	}
	res.Keys, res.DistinctKeys = len(ours), len(distinct)
	if done := float64(len(ours) - oursOut); done > 0 {
		res.RequestsPerLookup /= done
		res.BytesPerLookup /= done
	}
	res.RowsPerLookup /= float64(max(len(ours), 1))
	res.RowIndex, res.DuckDB = latencyOf(ours, oursOut), latencyOf(theirs, theirsOut)
	res.RatioP50 = ratio(res.RowIndex.P50MS, res.DuckDB.P50MS)
	res.RatioP90 = ratio(res.RowIndex.P90MS, res.DuckDB.P90MS)
	res.RatioP99 = ratio(res.RowIndex.P99MS, res.DuckDB.P99MS)
	if m.ref != nil {
		l := latencyOf(ref, refOut)
		res.DuckDBReference = &l
	}
	return res, nil
}

// streamed is what streamRows saw of a lookup.
type streamed struct {
	rows int64
	plan rowindex.Plan
}

// streamRows reads a lookup's rows through the iterator, as a server or the
// CLI returns them (a batch of decoded rows at a time, none kept), and as
// DuckDB's side of the bench does (every value of every row scanned into Go,
// then dropped): collecting a hot key's millions of rows into one Result
// would time the Go heap's growth, not the lookup.
func streamRows(ctx context.Context, ri *rowindex.RowIndex, q rowindex.Query) (streamed, error) {
	it, err := ri.Iter(ctx, q)
	if err != nil {
		return streamed{}, err
	}
	defer it.Close()
	var s streamed
	for it.Next() {
		s.rows++
	}
	s.plan = it.Plan()
	return s, it.Err()
}

// timed runs f under the timeout (none if 0) and returns its duration, and
// whether f failed because the timeout (not the caller's context) ran out.
func timed[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) (time.Duration, T, bool, error) {
	fctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		fctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	t0 := time.Now()
	v, err := f(fctx)
	d := time.Since(t0)
	cut := err != nil && ctx.Err() == nil && errors.Is(fctx.Err(), context.DeadlineExceeded)
	return d, v, cut, err
}
