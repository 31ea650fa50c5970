package fileindex

import (
	"context"
	"errors"
	"io"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
)

// Engine runs the part of a join that reads data: the index side over the
// located files (read with the stored schema and read options, computed
// and exploded columns applied, temporal deduplication) and the join with
// the keys. Locating stays in Go, in FileIndex.Join, whatever the engine.
//
// Two engines exist: embedded DuckDB (the default, JoinOptions.Engine nil)
// and Apache Spark through Spark Connect (package sparkengine). Both must
// give the same rows and the same schema for the same job.
type Engine interface {
	// Name names the engine in JoinStats and errors ("duckdb", "spark").
	Name() string
	// Join runs job and returns its rows. The caller closes them.
	Join(ctx context.Context, job *JoinJob) (JoinRows, error)
}

// JoinRows is an engine's streaming join result.
type JoinRows interface {
	// Schema is the result's schema (§5.7: join columns first, then the
	// left side's other columns, then the right side's).
	Schema() *schema.Struct
	// Next returns the next batch of rows in the pqrow value model, (nil,
	// io.EOF) at the end.
	Next(ctx context.Context) ([][]any, error)
	Close() error
}

// EngineReadStats is implemented by JoinRows whose engine reports what it
// read (Spark's scan metrics). The figures are final once Next returned
// io.EOF.
type EngineReadStats interface {
	// ReadStats returns the number of files and bytes the engine's scans
	// read; ok is false when the engine reported no scan metrics.
	ReadStats() (files, bytes int64, ok bool)
}

// Computed is one computed column of a job: Name = Expr, a Spark SQL
// expression over the stored schema's columns (§3.3).
type Computed struct {
	Name string
	Expr string
}

// JoinJob is everything an Engine needs to run one join. FileIndex.Join
// fills it after locating; engines must not change it.
type JoinJob struct {
	// Format, Schema and Options are the index's data file format
	// (parquet, csv, json), stored schema and read options.
	Format  string
	Schema  *schema.Struct
	Options map[string]string
	// Files are the located data files (object URIs, e.g. file:///...,
	// s3://...), the only files the index side may read. Empty when nothing
	// was located: the index side is then empty, with the same schema.
	Files []string
	// Computed columns are added as Spark's withColumn does (§3.3): in
	// order, each replacing the column of the same name or appended, all
	// evaluated over the columns read.
	Computed []Computed
	// Exploded are applied after the computed columns (§3.4): one row per
	// array element, rows with null or empty arrays dropped, mappings in
	// order (a cross product).
	Exploded []metadata.ExplodedFieldIndex
	// Temporal are the temporal indexes whose column is a join column: for
	// each, only every key's newest row is kept (§5.8), all ranks computed
	// over the same rows, then filtered together.
	Temporal []metadata.TemporalIndex
	// Keys are the caller's rows (the keys side), with their schema.
	Keys KeySource
	// On are the join columns (USING semantics), How the join type,
	// IndexOnLeft puts the index side on the left.
	On          []string
	How         JoinType
	IndexOnLeft bool
	// IndexColumns are the index side's columns, in order (the selection).
	IndexColumns []string
	// Output, when set, is a path the engine writes the rows to, in
	// OutputFormat (OutputParquet or OutputDelta) with OutputMode
	// (OutputErrorIfExists, OutputOverwrite or OutputAppend), both resolved
	// by Join; the returned JoinRows then has the schema and no rows.
	Output, OutputFormat, OutputMode string

	// The embedded DuckDB engine's inputs: the database the keys are
	// loaded into (table "q"; taken and loaded on first use, see
	// join_keys.go) and the join's late-materialization plan.
	fi    *FileIndex
	m     *metadata.Metadata
	db    func(context.Context) (*duck.DB, error)
	pf    *prefilter
	force JoinPath
	late  []string
	stats *JoinStats
	rows  RowLocator
}

// duckEngine is the embedded DuckDB engine: the located files read by our
// datafile readers (Parquet by late materialization where the join allows)
// into the DuckDB database that already holds the keys.
type duckEngine struct{}

func (duckEngine) Name() string { return "duckdb" }

func (duckEngine) Join(ctx context.Context, job *JoinJob) (JoinRows, error) {
	if job.db == nil {
		return nil, errors.New("fileindex: the DuckDB engine runs only jobs made by FileIndex.Join")
	}
	if job.Output != "" {
		return nil, aerr.Invalid("join: an output written by the engine needs the spark engine; the duckdb engine streams rows (write them with the caller's writer)")
	}
	direct := planDirect(job)
	if err := job.fi.loadIndexSide(ctx, job.db, job.m, job.Schema, job.Files, job.pf, job.force, job.On, job.late, job.rows, direct, job.stats); err != nil {
		return nil, err
	}
	if direct != nil && direct.rows != nil {
		direct.rows.fallback = func(ctx context.Context, stale int64) (JoinRows, error) {
			// Nothing went out (join_direct.go): read the located files
			// again without the row index and join in DuckDB.
			if err := job.fi.loadWithoutRowIndex(ctx, job.db, job.m, job.Schema, job.Files, job.pf, job.force, job.On, job.late, stale, job.stats); err != nil {
				return nil, err
			}
			return job.query(ctx)
		}
		return direct.rows, nil
	}
	return job.query(ctx)
}

// query runs the join in DuckDB over the keys ("q", loaded now if they
// were held in Go) and the index side ("idx_all").
func (job *JoinJob) query(ctx context.Context) (JoinRows, error) {
	db, err := job.db(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, joinSQL(job.m, job.On, job.How, job.IndexOnLeft, job.Keys.Schema().Names(), job.IndexColumns))
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// DuckDB returns the embedded DuckDB engine (what JoinOptions.Engine nil
// means), for callers that pick an engine by name.
func DuckDB() Engine { return duckEngine{} }

// loadedKeys streams the keys back out of DuckDB's table "q" for another
// engine: the KeySource the caller gave was consumed when it was loaded
// (the distinct keys are needed to locate before the join runs).
type loadedKeys struct {
	st   *schema.Struct
	db   *duck.DB
	rows *duck.Rows
	done bool
}

func (k *loadedKeys) Schema() *schema.Struct { return k.st }

func (k *loadedKeys) Next(ctx context.Context) ([][]any, error) {
	if k.done {
		return nil, io.EOF
	}
	if k.rows == nil {
		rows, err := k.db.Query(ctx, "SELECT * FROM q")
		if err != nil {
			return nil, err
		}
		k.rows = rows
	}
	b, err := k.rows.Next(ctx)
	if err != nil {
		k.done = true
		k.rows.Close()
	}
	return b, err
}
