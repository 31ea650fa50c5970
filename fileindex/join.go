package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
)

// JoinType is the type of a join (spec §5.7).
type JoinType string

// The join types. Semi and anti joins return only the left side's columns
// (the join columns first, as in every USING join).
const (
	Inner JoinType = "inner"
	Left  JoinType = "left"
	Right JoinType = "right"
	Full  JoinType = "full"
	Semi  JoinType = "semi"
	Anti  JoinType = "anti"
)

// ParseJoinType accepts Spark's join type names (case-insensitive, "_"
// ignored): inner; left, leftouter; right, rightouter; full, outer,
// fullouter; semi, leftsemi; anti, leftanti.
func ParseJoinType(s string) (JoinType, error) {
	switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "") {
	case "inner":
		return Inner, nil
	case "left", "leftouter":
		return Left, nil
	case "right", "rightouter":
		return Right, nil
	case "full", "outer", "fullouter":
		return Full, nil
	case "semi", "leftsemi":
		return Semi, nil
	case "anti", "leftanti":
		return Anti, nil
	}
	return "", aerr.Invalid("Unsupported join type '%s'", s)
}

// KeySource is a stream of query rows with a schema: the keys side of a
// join. datafile.Reader and datafile.Relation are KeySources (the CLI reads
// a CSV, JSON or Parquet keys file with them), as are the results of
// another join; RowsSource wraps rows held in memory. Next returns batches
// of rows aligned with Schema, in the pqrow value model, and (nil, io.EOF)
// at the end.
type KeySource interface {
	Schema() *schema.Struct
	Next(ctx context.Context) ([][]any, error)
}

// RowsSource returns a KeySource over rows aligned with st.
func RowsSource(st *schema.Struct, rows [][]any) KeySource {
	return &rowsSource{st: st, rows: rows}
}

type rowsSource struct {
	st   *schema.Struct
	rows [][]any
	done bool
}

func (r *rowsSource) Schema() *schema.Struct { return r.st }

func (r *rowsSource) Next(context.Context) ([][]any, error) {
	if r.done || len(r.rows) == 0 {
		return nil, io.EOF
	}
	r.done = true
	return r.rows, nil
}

// JoinOptions configure one join. They are per call: nothing is remembered
// on the FileIndex (§9 item 13: the library's selection is sticky).
type JoinOptions struct {
	// Select restricts the index side to these columns (stored-schema
	// columns, computed names or exploded aliases); it must contain every
	// join column. nil = every column.
	Select []string
	// IndexOnLeft puts the index side on the left (the library's
	// index.join(df, ...)); by default the keys are on the left
	// (df.join(index, ...)).
	IndexOnLeft bool

	// Engine runs the index side and the join; nil = embedded DuckDB.
	// Locating is done in Go either way, so an engine reads only the
	// located files.
	Engine Engine
	// Output, when set, has the engine write the joined rows itself to
	// this path (an object URI the engine can write, e.g. file:///out or
	// s3://bucket/out) instead of streaming them back: the Result then has
	// the schema and no rows. Only engines that write (Spark) accept it.
	// OutputFormat is OutputParquet or OutputDelta ("": delta when the
	// path holds a Delta table, else parquet); OutputMode says what an
	// existing path gets: OutputErrorIfExists (""), OutputOverwrite or
	// OutputAppend (see resolveOutput in output.go).
	Output, OutputFormat, OutputMode string

	// Rows, when set, can locate the join's matching rows through a row
	// index on the join column (see RowLocator, PathRowIndex); the face
	// sets it when the index has one. nil: never.
	Rows RowLocator

	// force, in tests, makes a join that could take a faster path take
	// PathFiltered or PathFull instead (the reference the paths are
	// compared with).
	force JoinPath
}

// Result is a join's streaming result. Close releases its engine (an
// in-memory DuckDB database and its spill folder, emptied and kept for the
// handle's next join: join_dbpool.go); it is not safe for concurrent use.
type Result struct {
	rows  JoinRows
	db    *joinDB
	pool  *joinDBPool // where db goes back when the result is closed
	files []string
	stats JoinStats
}

// Schema returns the result's schema: identical whether or not any file
// was located (§5.7).
func (r *Result) Schema() *schema.Struct { return r.rows.Schema() }

// Next returns the next batch of rows, (nil, io.EOF) at the end.
func (r *Result) Next(ctx context.Context) ([][]any, error) {
	rows, err := r.rows.Next(ctx)
	return rows, err
}

// Files returns the data files the index side read (the located files).
func (r *Result) Files() []string { return slices.Clone(r.files) }

// Stats returns how the join read its index side: the path taken (see
// JoinPath), files located, row groups and pages skipped, rows scanned and
// loaded, and the data files' read requests and bytes. With another engine
// than DuckDB, the engine's own read figures (EngineFilesRead,
// EngineBytesRead) are final once Next returned io.EOF.
func (r *Result) Stats() JoinStats {
	st := r.stats
	if es, ok := r.rows.(EngineReadStats); ok {
		if f, b, ok := es.ReadStats(); ok {
			st.EngineFilesRead, st.EngineBytesRead = f, b
		}
	}
	return st
}

// Close releases the result.
func (r *Result) Close() error {
	err := r.rows.Close()
	if r.db == nil {
		return err
	}
	d := r.db
	r.db = nil
	if err != nil {
		d.close()
		return err
	}
	return r.pool.put(d)
}

// joinFileColumn carries each index-side row's file while it is read; it
// never reaches the result.
const joinFileColumn = "_ariadne_join_file"

// Join joins the keys with the rows of the data files that may hold them
// (spec §5.7–§5.9), USING the columns on:
//
//  1. the join columns that are index columns prune: the files holding
//     their values are located from the keys' distinct values
//     (LocateFromRows); other join columns take part in the join only, and
//     a join without any index column is ErrInvalidArgument;
//  2. the located files are read with the stored schema and read options,
//     computed columns added and exploded aliases exploded (§5.9), and,
//     for join columns with a temporal index, only each key's newest row
//     kept (§5.8); this is the index side, all rows of the located files;
//  3. the two sides are joined in DuckDB with USING semantics: the join
//     columns once, first (coalesced in a full join), then the left side's
//     other columns, then the right side's; semi and anti joins return the
//     left side's columns only.
//
// Outer joins therefore see only rows of located files on the index side
// (§9 item 14). The result's schema does not depend on whether any file
// was located. The caller must Close the result.
func (fi *FileIndex) Join(ctx context.Context, keys KeySource, on []string, how JoinType, opts JoinOptions) (*Result, error) {
	if keys == nil {
		return nil, aerr.Invalid("join: keys must not be nil")
	}
	if len(on) == 0 {
		return nil, aerr.Invalid("join: at least one join column is required")
	}
	how, err := ParseJoinType(string(how))
	if err != nil {
		return nil, err
	}
	if err := fi.ix.EnsureStorageReady(ctx); err != nil {
		return nil, err
	}
	m := fi.ix.Metadata()
	src, err := fi.ix.StoredSchema()
	if err != nil {
		return nil, err
	}
	indexCols, err := joinColumns(m, src, on, keys.Schema(), opts.Select)
	if err != nil {
		return nil, err
	}
	out, err := fi.resolveOutput(ctx, opts)
	if err != nil {
		return nil, err
	}
	var pruning []string
	for _, c := range on {
		if _, err := route(m, c); err == nil {
			pruning = append(pruning, c)
		}
	}
	if len(pruning) == 0 {
		return nil, aerr.Invalid("None of the join columns [%s] have indexes. Unindexed columns: [%s]. Add indexes on these columns before joining.",
			strings.Join(on, ", "), strings.Join(on, ", "))
	}

	res := &Result{pool: fi.joinDBs}
	fail := func(err error) (*Result, error) {
		if res.db != nil {
			res.db.close()
			res.db = nil
		}
		return nil, err
	}
	ldb := &lazyDB{fi: fi, res: res, keys: keys}
	var files []string
	var pf *prefilter
	held := false // the keys are in Go, DuckDB untouched (join_keys.go)
	if directCandidate(m, src, keys.Schema(), on, how, opts) {
		h, rest, ok, err := holdKeys(ctx, keys)
		if err != nil {
			return fail(err)
		}
		if ok {
			held = true
			ldb.keys = h.source()
			var vals []any
			vals, pf = h.distinct(on[0])
			if files, err = fi.LocateFromRows(ctx, pruning, valueRows(vals)); err != nil {
				return fail(err)
			}
		} else {
			ldb.keys = rest
		}
	}
	if !held {
		db, err := ldb.get(ctx)
		if err != nil {
			return fail(err)
		}
		if files, err = fi.LocateFromRows(ctx, pruning, queryRows(ctx, db, pruning)); err != nil {
			return fail(err)
		}
		if pf, err = planPrefilter(ctx, db, m, src, keys.Schema(), on, how, opts.IndexOnLeft); err != nil {
			return fail(err)
		}
	}
	res.files = files
	res.stats.FilesLocated = len(files)
	if opts.force == PathFull {
		pf = nil
	}
	job := &JoinJob{
		Format: m.Format, Schema: src, Options: map[string]string{}, Files: slices.Clone(files),
		Keys: keys, On: on, How: how, IndexOnLeft: opts.IndexOnLeft, IndexColumns: indexCols,
		Output: out.Path, OutputFormat: out.Format, OutputMode: out.Mode,
		fi: fi, m: m, db: ldb.get, pf: pf, force: opts.force, late: lateColumns(m, src, on, opts.Select), stats: &res.stats, rows: opts.Rows,
	}
	for k, v := range m.ReadOptions.All() {
		job.Options[k] = v
	}
	for name, expr := range m.ComputedIndexes.All() {
		job.Computed = append(job.Computed, Computed{Name: name, Expr: expr})
	}
	job.Exploded = slices.Clone(m.ExplodedFieldIndexes)
	for _, t := range m.TemporalIndexes {
		if slices.Contains(on, t.Column) {
			job.Temporal = append(job.Temporal, t)
		}
	}
	eng := opts.Engine
	if eng == nil {
		eng = duckEngine{}
	}
	res.stats.Engine = eng.Name()
	res.stats.OutputFormat = out.Format
	if _, ok := eng.(duckEngine); !ok {
		// Another engine gets the keys back from DuckDB and reads the
		// located files itself.
		res.stats.Path = PathEngine
		db, err := ldb.get(ctx)
		if err != nil {
			return fail(err)
		}
		job.Keys = &loadedKeys{st: keys.Schema(), db: db}
		job.db, job.pf = nil, nil
	}
	rows, err := eng.Join(ctx, job)
	if err != nil {
		return fail(err)
	}
	res.rows = rows
	return res, nil
}

// joinColumns validates the join and selected columns (§5.7 step 2) and
// returns the index side's columns in order.
func joinColumns(m *metadata.Metadata, src *schema.Struct, on []string, keys *schema.Struct, sel []string) ([]string, error) {
	all := src.Names()
	for c := range m.ComputedIndexes.All() {
		if !slices.Contains(all, c) {
			all = append(all, c)
		}
	}
	for _, e := range m.ExplodedFieldIndexes {
		if !slices.Contains(all, e.AsColumn) {
			all = append(all, e.AsColumn)
		}
	}
	for _, c := range on {
		if _, ok := keys.Field(c); !ok {
			return nil, aerr.New(aerr.ErrColumnNotFound, "Join column '%s' is not a column of the keys (%v)", c, keys.Names())
		}
	}
	if sel == nil {
		var missing []string
		for _, c := range on {
			if !slices.Contains(all, c) && !slices.Contains(metadata.IndexColumns(m), c) {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			return nil, aerr.New(aerr.ErrColumnNotFound, "Join columns not found in schema or indexes: %s", strings.Join(missing, ", "))
		}
		return all, nil
	}
	if len(sel) == 0 {
		return nil, aerr.Invalid("select: at least one column is required")
	}
	var out []string
	for _, c := range sel {
		if strings.TrimSpace(c) == "" {
			return nil, aerr.Invalid("select: column names must not be blank")
		}
		if !slices.Contains(all, c) {
			return nil, aerr.New(aerr.ErrColumnNotFound, "Column '%s' is not a column of the index (%v)", c, all)
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	var missing []string
	for _, c := range on {
		if !slices.Contains(out, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, aerr.New(aerr.ErrColumnNotFound, "Join columns must be included in selected columns. Missing: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// duckKeys adapts a KeySource to duck.Source.
type duckKeys struct{ KeySource }

func (k duckKeys) Next(ctx context.Context) ([]pqrow.Row, error) { return k.KeySource.Next(ctx) }

// queryRows streams the pruning columns of the loaded keys.
func queryRows(ctx context.Context, db *duck.DB, cols []string) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		idents := make([]string, len(cols))
		for i, c := range cols {
			idents[i] = duck.Ident(c)
		}
		rows, err := db.Query(ctx, "SELECT DISTINCT "+strings.Join(idents, ", ")+" FROM q")
		if err != nil {
			yield(nil, err)
			return
		}
		defer rows.Close()
		for {
			batch, err := rows.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			for _, r := range batch {
				if !yield(r, nil) {
					return
				}
			}
		}
	}
}

// loadIndexSide reads the located files into table "raw" (§5.9 steps
// 1–2) and defines view "idx" over it: computed columns, the exploded read
// transform and temporal deduplication applied (§5.9 steps 3–4, §5.8).
//
// With a prefilter (see planPrefilter), only the rows whose join key is one
// of the keys are loaded: from Parquet files by late materialization
// (PathLate, reading only the columns cols, nil = all), from others by
// filtering every row in Go (PathFiltered). Without one, every row is
// loaded (PathFull). The path and what it read go to stats.
func (fi *FileIndex) loadIndexSide(ctx context.Context, dbf func(context.Context) (*duck.DB, error), m *metadata.Metadata, src *schema.Struct, files []string, pf *prefilter, force JoinPath, on, cols []string, loc RowLocator, direct *directPlan, stats *JoinStats) error {
	allowLate := force != PathFiltered
	allowScan := force == "" || force == PathScan
	opts := map[string]string{}
	for k, v := range m.ReadOptions.All() {
		opts[k] = v
	}
	spec := datafile.Spec{Format: m.Format, Schema: src, Options: opts}
	plan, err := datafile.Compile(spec, nil)
	if err != nil {
		return err
	}
	cres := &countingResolver{res: fi.res}
	allFiles := files
	var rowLF *lateFile // the row-index path's reader
	redone := false     // read again without the row index: its stats stand
	var in duck.Source
	stats.Path = PathFull
	if pf != nil {
		stats.FilterColumn, stats.Keys = pf.col, len(pf.keys)
	}
	switch {
	case pf != nil && allowLate && plan.Format() == datafile.Parquet:
		stats.Path = PathLate
		keys := make([]any, 0, len(pf.keys))
		for k := range pf.keys {
			keys = append(keys, k)
		}
		ks, err := pqrow.NewKeySet(keys)
		if err != nil {
			return err
		}
		proj, err := datafile.Compile(spec, cols)
		if err != nil {
			return err
		}
		lf := &lateFile{plan: proj, res: cres, col: pf.col, keys: ks, width: len(src.Fields), stats: &lateStats{}, footers: fi.footers}
		for _, f := range proj.Schema().Fields {
			lf.pos = append(lf.pos, slices.Index(src.Names(), f.Name))
		}
		var rowsWhy string
		if loc != nil && len(files) > 0 && (force == "" || force == PathRowIndex) {
			pos, why, err := locateByRowIndex(ctx, loc, pf, files, direct != nil)
			if err != nil {
				return err
			}
			rowsWhy = why
			if pos.Rows != nil {
				// Only the files holding a key's rows are read, and in
				// them only those rows.
				stats.Path, stats.Plan = PathRowIndex, why
				lf.positions, lf.seen, lf.check = pos.Rows, pos.Seen, pf.keys
				lf.keyPos = slices.Index(src.Names(), pf.col)
				rowLF = lf
				var hold []string
				for _, f := range files {
					if len(pos.Rows[f]) > 0 {
						hold = append(hold, f)
					}
				}
				files, allowScan = hold, false
			}
		}
		if allowScan {
			db, err := dbf(ctx)
			if err != nil {
				return err
			}
			sel, why, err := planScan(ctx, db, m, src, on, lf, files, force == PathScan)
			if err != nil {
				return err
			}
			stats.Plan = why
			if rowsWhy != "" {
				stats.Plan = why + " (" + rowsWhy + ")"
			}
			if sel != "" {
				stats.Path = PathScan
				stats.Requests, stats.Bytes = cres.reads()
				if err := db.Exec(ctx, "CREATE VIEW raw AS "+sel); err != nil {
					return err
				}
				return fi.defineIndexView(ctx, db, m, src)
			}
		}
		if direct != nil && rowLF != nil {
			// The direct answer streams: the rows go to the caller as
			// files are read, the statistics once they are all read.
			lf.strict, lf.direct = true, direct
			stats.Direct = true
			direct.rows = &directStream{d: direct, src: newLateSource(ctx, src, lf, files), lf: lf,
				finish: func() { lateStatsTo(stats, lf, cres) }}
			return nil
		}
		ls := newLateSource(ctx, src, lf, files)
		defer ls.Close()
		in = ls
		defer func() {
			if !redone {
				lateStatsTo(stats, lf, nil)
			}
		}()
	default:
		rel := datafile.NewRelation(plan, cres, files, joinFileColumn)
		defer rel.Close()
		in = rowCounter{rel, &stats.RowsScanned}
		if pf != nil {
			stats.Path = PathFiltered
			in = pf.wrap(in)
		}
	}
	defer func() {
		if !redone {
			stats.Requests, stats.Bytes = cres.reads()
		}
	}()
	db, err := dbf(ctx)
	if err != nil {
		return err
	}
	if _, err := db.Load(ctx, "raw", rowCounter{in, &stats.RowsLoaded}); err != nil {
		return err
	}
	if rowLF != nil && rowLF.stats.staleCount() > 0 {
		stale := rowLF.stats.staleCount()
		// The row index pointed at rows holding other keys: a data file
		// changed after it was indexed, so rows may be missing too. Read
		// the located files again without it.
		if err := db.Exec(ctx, "DROP TABLE raw"); err != nil {
			return err
		}
		redone = true
		return fi.loadWithoutRowIndex(ctx, dbf, m, src, allFiles, pf, force, on, cols, stale, stats)
	}
	return fi.defineIndexView(ctx, db, m, src)
}

// loadWithoutRowIndex reads the index side again without the row index,
// which pointed at stale rows (stale of them hold other keys).
func (fi *FileIndex) loadWithoutRowIndex(ctx context.Context, db func(context.Context) (*duck.DB, error), m *metadata.Metadata, src *schema.Struct, files []string, pf *prefilter, force JoinPath, on, cols []string, stale int64, stats *JoinStats) error {
	*stats = JoinStats{FilesLocated: stats.FilesLocated, Engine: stats.Engine}
	if err := fi.loadIndexSide(ctx, db, m, src, files, pf, force, on, cols, nil, nil, stats); err != nil {
		return err
	}
	stats.Plan = fmt.Sprintf("%s (row index stale: %d rows at its positions hold other keys)", stats.Plan, stale)
	return nil
}

// lateStatsTo records the late reader's statistics in stats, and the
// store's work when cres is given. Reads may still be in flight after an
// error.
func lateStatsTo(stats *JoinStats, lf *lateFile, cres *countingResolver) {
	lf.stats.mu.Lock()
	sc, vr := lf.stats.scan, lf.stats.vectorReads
	lf.stats.mu.Unlock()
	stats.vectorReads = vr
	stats.RowGroups, stats.RowGroupsSkipped = sc.RowGroups, sc.RowGroupsSkipped
	stats.Pages, stats.PagesSkipped = sc.Pages, sc.PagesSkipped
	stats.RowsScanned = sc.RowsScanned
	if cres != nil {
		stats.Requests, stats.Bytes = cres.reads()
	}
}

// defineIndexView defines view "idx_all" over "raw": computed columns
// added, exploded aliases exploded.
func (fi *FileIndex) defineIndexView(ctx context.Context, db *duck.DB, m *metadata.Metadata, src *schema.Struct) error {
	var computed []duck.Computed
	for name, expr := range m.ComputedIndexes.All() {
		if err := duck.CheckFunctions(expr); err != nil {
			return &ComputedIndexError{Name: name, Expr: expr, Err: err}
		}
		computed = append(computed, duck.Computed{Name: name, Expr: expr})
	}
	sql := duck.SelectComputed("raw", src.Names(), computed)
	// Exploded read transform (§3.4): one row per element, rows with null
	// or empty arrays dropped; mappings applied in order (cross product).
	for _, e := range m.ExplodedFieldIndexes {
		field := pathIdent(e.FieldPath, "e")
		sql = fmt.Sprintf("SELECT *, unnest(list_transform(%s, e -> %s)) AS %s FROM (%s)",
			pathIdent(e.ArrayColumn, ""), field, duck.Ident(e.AsColumn), sql)
	}
	// Temporal deduplication (§5.8) for every temporal column; Join keeps
	// it for the temporal join columns only (see joinSQL).
	if err := db.Exec(ctx, "CREATE VIEW idx_all AS "+sql); err != nil {
		return err
	}
	return nil
}

// pathIdent quotes a dotted path, optionally under a lambda variable.
func pathIdent(path, under string) string {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		parts[i] = duck.Ident(p)
	}
	if under != "" {
		return under + "." + strings.Join(parts, ".")
	}
	return strings.Join(parts, ".")
}

// joinSQL builds the final statement over "q" (keys) and "idx_all".
func joinSQL(m *metadata.Metadata, on []string, how JoinType, indexLeft bool, keyCols, indexCols []string) string {
	// Index side: temporal dedup for the temporal join columns, then the
	// selection.
	idx := "SELECT * FROM idx_all"
	var ranks []string
	for _, t := range m.TemporalIndexes {
		if slices.Contains(on, t.Column) {
			ranks = append(ranks, fmt.Sprintf("row_number() OVER (PARTITION BY %s ORDER BY %s DESC NULLS LAST) = 1",
				duck.Ident(t.Column), pathIdent(t.TimestampColumn, "")))
		}
	}
	if len(ranks) > 0 {
		// All ranks are computed over the original rows, then filtered
		// together (§5.8).
		cols := make([]string, len(ranks))
		for i := range ranks {
			cols[i] = fmt.Sprintf("(%s) AS _ariadne_temporal_keep_%d", ranks[i], i)
		}
		conds := make([]string, len(ranks))
		for i := range ranks {
			conds[i] = fmt.Sprintf("_ariadne_temporal_keep_%d", i)
		}
		idx = fmt.Sprintf("SELECT * FROM (SELECT *, %s FROM idx_all) WHERE %s", strings.Join(cols, ", "), strings.Join(conds, " AND "))
	}
	sel := make([]string, len(indexCols))
	for i, c := range indexCols {
		sel[i] = duck.Ident(c)
	}
	idx = "SELECT " + strings.Join(sel, ", ") + " FROM (" + idx + ")"

	leftSQL, leftCols := "SELECT * FROM q", keyCols
	rightSQL, rightCols := idx, indexCols
	if indexLeft {
		leftSQL, leftCols, rightSQL, rightCols = rightSQL, rightCols, leftSQL, leftCols
	}
	conds := make([]string, len(on))
	for i, c := range on {
		conds[i] = fmt.Sprintf("l.%s = r.%s", duck.Ident(c), duck.Ident(c))
	}
	var out []string
	if how == Semi || how == Anti {
		// Spark's USING join (LeftExistence): the join columns first, in
		// the order given, then the left side's other columns; the
		// library's answer (checked against 0.1.8-beta in interop/).
		for _, c := range on {
			out = append(out, "l."+duck.Ident(c))
		}
		for _, c := range leftCols {
			if !slices.Contains(on, c) {
				out = append(out, "l."+duck.Ident(c))
			}
		}
	} else {
		for _, c := range on {
			switch how {
			case Right:
				out = append(out, "r."+duck.Ident(c)+" AS "+duck.Ident(c))
			case Full:
				out = append(out, fmt.Sprintf("coalesce(l.%s, r.%s) AS %s", duck.Ident(c), duck.Ident(c), duck.Ident(c)))
			default:
				out = append(out, "l."+duck.Ident(c)+" AS "+duck.Ident(c))
			}
		}
		for _, c := range leftCols {
			if !slices.Contains(on, c) {
				out = append(out, "l."+duck.Ident(c))
			}
		}
		for _, c := range rightCols {
			if !slices.Contains(on, c) {
				out = append(out, "r."+duck.Ident(c))
			}
		}
	}
	kind := map[JoinType]string{Inner: "INNER JOIN", Left: "LEFT JOIN", Right: "RIGHT JOIN", Full: "FULL OUTER JOIN", Semi: "SEMI JOIN", Anti: "ANTI JOIN"}[how]
	return fmt.Sprintf("SELECT %s FROM (%s) AS l %s (%s) AS r ON %s",
		strings.Join(out, ", "), leftSQL, kind, rightSQL, strings.Join(conds, " AND "))
}
