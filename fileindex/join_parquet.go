package fileindex

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// This file is the join's late-materialization path for Parquet data files
// and the statistics every path reports. Which path a join takes:
//
//   - PathLate: the index's format is Parquet and the join may drop index
//     rows whose key is not among the keys (the conditions of
//     planPrefilter: the join type never returns unmatched index rows, the
//     filter column is a plain source column of the same key class as the
//     keys, no temporal deduplication ranks on another join column). Each
//     located file's filter column is read first, skipping row groups by
//     statistics (and bloom filters when a file has several) and pages by
//     the column index; the other columns are read only at the matching
//     rows, seeking through the offset index. Files are read concurrently
//     (lateReadConcurrency) and handed to DuckDB in file order.
//   - PathFiltered: the same conditions for CSV and JSON files, which have
//     no page index: every row is decoded, and rows whose key is not among
//     the keys are dropped in Go before DuckDB.
//   - PathFull: every other case (right/full joins with the keys on the
//     left, left/anti joins with the index on the left, computed or
//     exploded join columns, keys and column of different types, temporal
//     ranking on another join column, more than maxPrefilterKeys keys):
//     every row of every located file is loaded into DuckDB.
//
// The paths return the same rows. One difference on bad data: the late
// path converts the values of matching rows only, so a value that cannot be
// read as its column's type fails the join only if its row matches a key
// (DuckDB's own late-materializing reader behaves alike).

// JoinPath names how a join read its index side (see join_parquet.go).
type JoinPath string

// The join paths.
const (
	// PathLate: Parquet files, key column first, other columns only at
	// matching rows.
	PathLate JoinPath = "late"
	// PathFiltered: every row decoded, non-matching rows dropped in Go.
	PathFiltered JoinPath = "filtered"
	// PathFull: every row of every located file loaded into DuckDB.
	PathFull JoinPath = "full"
	// PathEngine: the located files read and joined by another engine
	// than embedded DuckDB (JoinOptions.Engine; JoinStats.Engine names it).
	PathEngine JoinPath = "engine"
)

// JoinStats describes how a join read its index side.
type JoinStats struct {
	// Engine names the engine that read the located files and joined
	// ("duckdb", "spark").
	Engine string   `json:"engine"`
	Path   JoinPath `json:"path"`
	// FilterColumn is the join column whose keys select rows (PathLate and
	// PathFiltered); Keys its number of distinct non-null keys.
	FilterColumn string `json:"filter_column,omitempty"`
	Keys         int    `json:"keys,omitempty"`
	// FilesLocated is the number of data files the index located.
	FilesLocated int `json:"files_located"`
	// Row groups and key-column pages seen and skipped (PathLate only;
	// pages only where a file has a column index).
	RowGroups        int `json:"row_groups,omitempty"`
	RowGroupsSkipped int `json:"row_groups_skipped,omitempty"`
	Pages            int `json:"pages,omitempty"`
	PagesSkipped     int `json:"pages_skipped,omitempty"`
	// RowsScanned is the number of rows whose key was decoded (PathLate)
	// or that were decoded whole (the other paths); RowsLoaded the number
	// handed to DuckDB as the index side.
	RowsScanned int64 `json:"rows_scanned"`
	RowsLoaded  int64 `json:"rows_loaded"`
	// Requests (stats and ranged reads) and Bytes (read) count the
	// data-file store's work.
	Requests int64 `json:"requests"`
	Bytes    int64 `json:"bytes"`
	// EngineFilesRead and EngineBytesRead are what another engine reported
	// its scans read (Spark's "number of files read" and "size of files
	// read"); 0 with DuckDB, whose reads are Requests and Bytes.
	EngineFilesRead int64 `json:"engine_files_read,omitempty"`
	EngineBytesRead int64 `json:"engine_bytes_read,omitempty"`
	// OutputFormat is the format the engine wrote JoinOptions.Output in
	// (parquet or delta, after inference); "" when the rows streamed back.
	OutputFormat string `json:"output_format,omitempty"`
	// Plan says why the path was chosen between PathLate and PathScan
	// (join_scan.go): the share of sampled rows that match, or what kept
	// the engine from reading the files itself.
	Plan string `json:"plan,omitempty"`
	// Direct is true when the row-index path's rows were the answer, with
	// no SQL run over them (a plain inner join: join_direct.go).
	Direct bool `json:"direct,omitempty"`
	// vectorReads counts the row groups the direct answer read as typed
	// vectors rather than rows (tests).
	vectorReads int64
}

// lateReadConcurrency bounds the files read at once by the late path (and
// so the files whose matching rows wait in memory for DuckDB): decoding is
// CPU-bound on local files, while remote reads want several requests in
// flight.
const lateReadConcurrency = 8

// countingResolver counts the requests and bytes of every store it
// resolves, for JoinStats.
type countingResolver struct {
	res    datafile.Resolver
	mu     sync.Mutex
	stores []*store.Counting
}

func (c *countingResolver) Resolve(ctx context.Context, uri string) (store.Store, string, error) {
	st, key, err := c.res.Resolve(ctx, uri)
	if err != nil {
		return nil, "", err
	}
	cs := store.NewCounting(st)
	c.mu.Lock()
	c.stores = append(c.stores, cs)
	c.mu.Unlock()
	return cs, key, nil
}

// reads returns the read requests and bytes so far.
func (c *countingResolver) reads() (requests, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.stores {
		x := s.Snapshot()
		requests += x.Read.Requests + x.Stat.Requests
		bytes += x.Read.Bytes
	}
	return requests, bytes
}

// lateColumns returns the source columns the index side needs, or nil for
// all of them: computed columns may use any column, and otherwise the
// selection, the join columns, exploded arrays (they decide which rows
// survive) and temporal timestamps.
func lateColumns(m *metadata.Metadata, src *schema.Struct, on, sel []string) []string {
	if sel == nil || m.ComputedIndexes.Len() > 0 {
		return nil
	}
	var cols []string
	add := func(path string) {
		root, _, _ := strings.Cut(path, ".")
		if _, ok := src.Field(root); ok && !slices.Contains(cols, root) {
			cols = append(cols, root)
		}
	}
	for _, c := range sel {
		add(c)
	}
	for _, c := range on {
		add(c)
	}
	for _, e := range m.ExplodedFieldIndexes {
		add(e.ArrayColumn)
	}
	for _, t := range m.TemporalIndexes {
		add(t.Column)
		add(t.TimestampColumn)
	}
	// Schema order, as the relation reads them.
	slices.SortFunc(cols, func(a, b string) int {
		return slices.Index(src.Names(), a) - slices.Index(src.Names(), b)
	})
	return cols
}

// lateSource is the index side of PathLate as a duck.Source: per located
// file, in file order, the matching rows with every source column (unread
// ones null). Unlike datafile.Relation's rows they carry no file column:
// the join never reads it, and it would cost the appender a string a row.
type lateSource struct {
	schema *schema.Struct
	slots  []chan lateResult
	sem    chan struct{}
	cancel context.CancelFunc
	next   int
}

type lateResult struct {
	rows []pqrow.Row
	// out is a file's part of the direct answer (lateFile.direct set):
	// the result's rows, shaped by the reading goroutine.
	out [][]any
	err error
}

// lateFile is what reading one file needs.
type lateFile struct {
	plan  *datafile.Plan // projection: the columns to read
	res   datafile.Resolver
	col   string
	keys  *pqrow.KeySet
	pos   []int // projected column i goes to row position pos[i]
	width int   // source columns
	stats *lateStats
	// footers keeps the located files' footers and page indexes across
	// joins (the handle's: FileIndex.footers).
	footers *pqrow.FileCache

	// sampled holds the files whose key column the planner read
	// (planScan), opened and matched: the late path reads their matching
	// rows without opening and matching them again.
	// positions, on the row-index path, are each file's matching rows
	// (see RowLocator): they replace matching the key column; the rows
	// read are checked against check (the prefilter's normalized keys),
	// the key column being at row position keyPos.
	positions map[string][]RowGroupRows
	// seen are the located files' attributes the RowLocator got from the
	// store (LocatedRows.Seen): a file found there is opened without
	// another Stat.
	seen   map[string]store.ObjectInfo
	check  map[any]struct{}
	keyPos int
	// strict, on the direct answer's path (join_direct.go), fails a file
	// with a row at a position holding another key (*StaleRowIndexError)
	// instead of dropping the row: none of its rows may reach the caller.
	strict bool
	// direct, on the direct answer's path, makes each file's reader shape
	// its rows as the result's (lateFile.readDirect), so that work runs in
	// the concurrent reads rather than in the caller's.
	direct *directPlan

	sampledMu sync.Mutex
	sampled   map[string]*sampledFile
}

// sampledFile is a located file the planner opened and matched.
type sampledFile struct {
	pf      *datafile.ParquetFile
	matches []pqrow.Match
	st      pqrow.ScanStats
}

// match opens uri and matches its key column, or takes what the planner
// found for it, and adds what that read to the join's scan stats.
func (lf *lateFile) match(ctx context.Context, uri string) (*datafile.ParquetFile, []pqrow.Match, error) {
	pf, matches, st, err := lf.scanMatches(ctx, uri)
	lf.stats.mu.Lock()
	lf.stats.scan.Add(st)
	lf.stats.mu.Unlock()
	return pf, matches, err
}

// scanMatches is match without counting: the file's matches, and what
// finding them read.
func (lf *lateFile) scanMatches(ctx context.Context, uri string) (*datafile.ParquetFile, []pqrow.Match, pqrow.ScanStats, error) {
	lf.sampledMu.Lock()
	sf := lf.sampled[uri]
	delete(lf.sampled, uri)
	lf.sampledMu.Unlock()
	if sf != nil {
		return sf.pf, sf.matches, sf.st, nil
	}
	var st pqrow.ScanStats
	var pf *datafile.ParquetFile
	var err error
	if info, ok := lf.seen[uri]; ok {
		pf, err = lf.plan.OpenParquetSeen(ctx, lf.res, uri, info, lf.footers)
	} else {
		pf, err = lf.plan.OpenParquetCached(ctx, lf.res, uri, lf.footers)
	}
	if err != nil {
		return nil, nil, st, err
	}
	if lf.positions != nil {
		return pf, positionMatches(lf.positions[uri]), st, nil
	}
	matches, err := pf.MatchRows(ctx, lf.col, lf.keys, &st)
	return pf, matches, st, err
}

// lateStats gathers the statistics of concurrent file reads.
type lateStats struct {
	mu   sync.Mutex
	scan pqrow.ScanStats
	// mismatched counts rows a row index pointed at whose key was not
	// one of the keys (a stale row index); they were dropped.
	mismatched int64
	// vectorReads: JoinStats.vectorReads.
	vectorReads int64
}

func newLateSource(ctx context.Context, full *schema.Struct, lf *lateFile, files []string) *lateSource {
	ctx, cancel := context.WithCancel(ctx)
	st := &schema.Struct{Fields: slices.Clone(full.Fields)}
	s := &lateSource{schema: st, slots: make([]chan lateResult, len(files)), sem: make(chan struct{}, lateReadConcurrency), cancel: cancel}
	for i := range s.slots {
		s.slots[i] = make(chan lateResult, 1)
	}
	go func() {
		for i, uri := range files {
			select {
			case s.sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func() {
				var r lateResult
				if lf.direct != nil {
					r.out, r.err = lf.readDirect(ctx, uri)
				} else {
					r.rows, r.err = lf.read(ctx, uri)
				}
				s.slots[i] <- r
			}()
		}
	}()
	return s
}

func (s *lateSource) Schema() *schema.Struct { return s.schema }

// Next returns the matching rows of the next file that has any.
func (s *lateSource) Next(ctx context.Context) ([]pqrow.Row, error) {
	r, err := s.next1(ctx)
	return r.rows, err
}

// nextDirect returns the next file's part of the direct answer
// (lateFile.direct set) that has rows.
func (s *lateSource) nextDirect(ctx context.Context) ([][]any, error) {
	r, err := s.next1(ctx)
	return r.out, err
}

// next1 returns the result of the next file that has rows.
func (s *lateSource) next1(ctx context.Context) (lateResult, error) {
	for s.next < len(s.slots) {
		var r lateResult
		select {
		case r = <-s.slots[s.next]:
		case <-ctx.Done():
			return lateResult{}, ctx.Err()
		}
		s.next++
		<-s.sem
		if r.err != nil {
			return lateResult{}, r.err
		}
		if len(r.rows) > 0 || len(r.out) > 0 {
			return r, nil
		}
	}
	return lateResult{}, io.EOF
}

// Close stops the reads in flight.
func (s *lateSource) Close() { s.cancel() }

// read returns the rows of one file whose key matches.
func (lf *lateFile) read(ctx context.Context, uri string) ([]pqrow.Row, error) {
	pf, matches, err := lf.match(ctx, uri)
	if err != nil {
		return nil, err
	}
	var out []pqrow.Row
	var stale int64
	for _, m := range matches {
		var n int64
		if out, n, err = lf.readMatch(ctx, pf, m, out); err != nil {
			return nil, err
		}
		stale += n
	}
	if stale > 0 && lf.strict {
		return nil, &StaleRowIndexError{File: uri, Rows: stale}
	}
	return out, nil
}

// readMatch appends m's rows of pf to out as full rows (every source
// column, unread ones null). On the row-index path a row whose key is not
// one of the keys is left out and counted as stale.
func (lf *lateFile) readMatch(ctx context.Context, pf *datafile.ParquetFile, m pqrow.Match, out []pqrow.Row) ([]pqrow.Row, int64, error) {
	rows, err := pf.ReadRows(ctx, m, lf.col)
	if err != nil {
		return out, 0, err
	}
	var stale int64
	for _, r := range rows {
		row := r
		if !lf.identity() {
			row = make(pqrow.Row, lf.width)
			for i, v := range r {
				row[lf.pos[i]] = v
			}
		}
		if lf.check != nil {
			// A row index gave the position: a file rewritten since
			// it was indexed may hold another row there.
			if _, ok := lf.check[normalizeKey(row[lf.keyPos])]; !ok {
				stale++
				continue
			}
		}
		out = append(out, row)
	}
	lf.countStale(stale)
	return out, stale, nil
}

// countStale adds n rows found at a row index's positions holding other
// keys to the statistics.
func (lf *lateFile) countStale(n int64) {
	if n > 0 {
		lf.stats.mu.Lock()
		lf.stats.mismatched += n
		lf.stats.mu.Unlock()
	}
}

// identity reports whether the projection is every source column in
// order (no selection), so read rows are already full rows.
func (lf *lateFile) identity() bool {
	if len(lf.pos) != lf.width {
		return false
	}
	for i, p := range lf.pos {
		if p != i {
			return false
		}
	}
	return true
}

// rowCounter counts the rows that pass through a duck.Source.
type rowCounter struct {
	duck.Source
	n *int64
}

func (c rowCounter) Next(ctx context.Context) ([]pqrow.Row, error) {
	rows, err := c.Source.Next(ctx)
	*c.n += int64(len(rows))
	return rows, err
}
