package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/internal/duck"
)

// Engine settings of an update. The DuckDB database of an update holds one
// batch at a time: the batch's rows (spilled to a private temporary folder
// past the memory limit) and the hash tables of its per-file aggregates.
const (
	// engineMemoryLimit: a batch's inline value sets are bounded by L =
	// 500,000 distinct values per column (§3.10); at ~100 B per value in
	// DuckDB's hash tables that is ~50 MB per indexed column, so 512 MB
	// holds ten indexed columns' aggregates in memory before spilling.
	engineMemoryLimit = "512MB"
	// analysisChunkFiles and analysisChunkBytes bound the files the
	// pre-flight analysis loads together: many small files share one load
	// (one appender, one set of count queries) while a chunk's input stays
	// within a few engine memory limits (spilled beyond).
	analysisChunkFiles = 64
	analysisChunkBytes = 256 << 20
	// largeTargetFileSize is the data file size of large-index appends: the
	// Delta writer buffers a file's rows before writing them, so this bounds
	// that buffer (32 MiB of values ≈ 2 M short strings), well below the
	// 128 MiB default that suits the main table.
	largeTargetFileSize = 32 << 20
)

// session is the engine state of one update: the plan, the compiled reader
// and an embedded DuckDB database with a private spill folder.
type session struct {
	fi    *FileIndex
	plan  *buildPlan
	read  *datafile.Plan
	db    *duck.DB
	tmp   string
	names []string // columns of the loaded relation (before computed columns)
	// cache holds the files the analysis kept loaded for the builds;
	// srcView is set while src is a view over kept tables.
	cache   readCache
	srcView bool
	// sum is the Go summary plan (nil: the engine builds every file);
	// spill holds summarised files' cells until their batch; workers and
	// budget bound the files read at once and their value sets' memory.
	sum     *summaryPlan
	typed   *typedPlan // the typed path of sum (Parquet only), nil: rows
	spill   *spillFile
	workers int
	budget  int64
	stats   stageStats
}

// stageStats are the times of an update's pipeline stages (see
// UpdateResult.Stages).
type stageStats struct {
	read, summarize time.Duration // summed over the reading workers
	readWall        time.Duration // wall time of the concurrent read
	typed           int           // files summarised from typed pages
	analyze         time.Duration // the engine's analysis
	build           time.Duration
	stage, merge    time.Duration
}

func (s stageStats) export() UpdateStages {
	return UpdateStages{Read: s.read, Summarize: s.summarize, ReadWall: s.readWall,
		Analyze: s.analyze, Build: s.build, Stage: s.stage, Merge: s.merge}
}

// openEngine opens the update's database, first removing the spill
// folders that killed runs of this machine left behind (sweepSpillDirs).
func openEngine(ctx context.Context) (*duck.DB, string, error) {
	sweepSpillDirs(os.TempDir())
	tmp, err := newSpillDir("update")
	if err != nil {
		return nil, "", err
	}
	db, err := duck.Open(ctx, duck.Options{MemoryLimit: engineMemoryLimit, TempDirectory: tmp})
	if err != nil {
		os.RemoveAll(tmp)
		return nil, "", err
	}
	return db, tmp, nil
}

// close releases the database and its spill folder.
func (s *session) close() {
	if s.db != nil {
		s.db.Close()
	}
	s.spill.close()
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
	}
}

// load reads uris (streamed by our readers, §5.9) into table src and
// defines view t over it with the computed columns applied (§3.3).
func (s *session) load(ctx context.Context, uris []string) error {
	s.unload(ctx)
	if _, err := s.loadInto(ctx, "src", uris, false); err != nil {
		return err
	}
	return s.defineView(ctx)
}

// defineView defines view t over table src with the computed columns
// applied (§3.3).
func (s *session) defineView(ctx context.Context) error {
	q := "CREATE OR REPLACE TEMP VIEW t AS " + duck.SelectComputed("src", s.names, s.plan.computed)
	if err := s.db.Exec(ctx, q); err != nil {
		var ce *ComputedIndexError
		if !errors.As(err, &ce) && len(s.plan.computed) > 0 {
			return &ComputedIndexError{Name: s.plan.computed[0].Name, Expr: s.plan.computed[0].Expr, Err: err}
		}
		return err
	}
	return nil
}

// unload drops view t, src (a table, or a view over kept tables, which
// stay) and the table of a batch's files that were not kept.
func (s *session) unload(ctx context.Context) {
	s.db.Exec(ctx, "DROP VIEW IF EXISTS t")
	if s.srcView {
		s.db.Exec(ctx, "DROP VIEW IF EXISTS src")
		s.srcView = false
	} else {
		s.db.Drop(ctx, "src")
	}
	s.db.Drop(ctx, freshTable)
}

// valuesFrom is a subquery yielding (filename, v[, ts]) for column c over
// view t: exploded columns unnest their field list (null and empty arrays
// yield nothing, §3.4); temporal columns carry their timestamp.
func valuesFrom(c valueCol) string {
	switch c.kind {
	case kindExploded:
		return fmt.Sprintf("(SELECT filename, unnest(%s) AS v FROM t)", c.expr)
	case kindTemporal:
		return fmt.Sprintf("(SELECT filename, %s AS v, %s AS ts FROM t)", c.expr, c.tsExpr)
	}
	return fmt.Sprintf("(SELECT filename, %s AS v FROM t)", c.expr)
}

// sqlInList renders a SQL IN list of file names.
func sqlInList(uris []string) string {
	q := make([]string, len(uris))
	for i, u := range uris {
		q[i] = duck.String(u)
	}
	return "(" + strings.Join(q, ", ") + ")"
}

// countSQL counts each file's distinct values of c (nulls excluded, except
// for temporal columns whose arrays hold a null key as an entry, §3.7).
// DISTINCT over (filename, v) then COUNT is DuckDB's out-of-core hash
// aggregate: a file's value set is never held whole in memory.
func countSQL(c valueCol) string {
	where := " WHERE v IS NOT NULL"
	if c.kind == kindTemporal {
		where = ""
	}
	return fmt.Sprintf("SELECT filename, count(*) FROM (SELECT DISTINCT filename, v FROM %s s%s) d GROUP BY filename", valuesFrom(c), where)
}

// query runs q and calls fn for every result row, streaming.
func (s *session) query(ctx context.Context, q string, fn func(row []any) error) error {
	rows, err := s.db.Query(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for {
		batch, err := rows.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		for _, r := range batch {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
}

// querySeq streams q as an iterator of rows (for Delta appends), calling
// tap on each row first.
func (s *session) querySeq(ctx context.Context, q string, tap func(row []any)) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		rows, err := s.db.Query(ctx, q)
		if err != nil {
			yield(nil, err)
			return
		}
		defer rows.Close()
		for {
			batch, err := rows.Next(ctx)
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			for _, r := range batch {
				if tap != nil {
					tap(r)
				}
				if !yield(r, nil) {
					return
				}
			}
		}
	}
}

// asInt64 converts a COUNT result.
func asInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case int:
		return int64(x)
	}
	return 0
}
