package sparkengine

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/schema"
)

// KeyRuns implements rowindex.EntryEngine: one Spark scan of the key
// column of exactly job's Parquet files, each row's file and position from
// Spark's _metadata (file_path, row_index: Spark 3.5+), and the runs of
// equal consecutive non-null keys per file formed by Spark (RunSQL). The
// row index's footers, entries, fragments and manifest are ours: Spark
// only reads the data files.
func (e *Engine) KeyRuns(ctx context.Context, job *rowindex.RunJob) (rowindex.RunRows, error) {
	sparkType, _, err := keyRead(job.KeyType)
	if err != nil {
		return nil, err
	}
	rows, err := e.run(ctx, "key runs", func(ctx context.Context, s *session) (*sparkRows, error) {
		proj := msg("Relation")
		st := &schema.Struct{Fields: []schema.Field{{Name: job.Key, Type: &schema.Primitive{Name: sparkType}, Nullable: true}}}
		set(proj, "project.input", readRelation("parquet", st, map[string]string{}, job.Files))
		var exprs []protoreflect.Message
		for _, x := range []string{
			pathIdent(job.Key, "") + " AS " + quote(keyCol),
			"_metadata.file_path AS " + quote(fileCol),
			"_metadata.row_index AS " + quote(posCol),
		} {
			m := msg("Expression")
			set(m, "expression_string.expression", x)
			exprs = append(exprs, m)
		}
		set(proj, "project.expressions", exprs)
		if err := s.command(ctx, "read files", createView(viewRaw, proj)); err != nil {
			return nil, err
		}
		return s.rows(ctx, "key runs", RunSQL(job.KeyType))
	})
	if err != nil {
		return nil, err
	}
	files := make(map[string]string, len(job.Files))
	for _, f := range job.Files {
		files[pathKey(sparkPath(f))] = f
	}
	return &fileRows{sparkRows: rows, files: files}, nil
}

// keyCol is the key column of a key-runs scan.
const keyCol = "_ariadne_key"

// keyRead returns the Spark type a key of type t is read as, and the
// expression over keyCol that renders its value as rowindex.RunJob says
// (the Parquet physical value: integers, days, epoch units as BIGINT;
// floating point as DOUBLE with -0.0 made 0.0, as the key encoding does).
func keyRead(t rowindex.EngineKeyType) (sparkType, expr string, err error) {
	k := quote(keyCol)
	switch t {
	case rowindex.EngineKeyInt8:
		return "byte", "CAST(" + k + " AS BIGINT)", nil
	case rowindex.EngineKeyInt16:
		return "short", "CAST(" + k + " AS BIGINT)", nil
	case rowindex.EngineKeyInt32:
		return "integer", "CAST(" + k + " AS BIGINT)", nil
	case rowindex.EngineKeyInt64:
		return "long", k, nil
	case rowindex.EngineKeyDate:
		return "date", "CAST(unix_date(" + k + ") AS BIGINT)", nil
	case rowindex.EngineKeyMillis:
		return "timestamp", "unix_millis(" + k + ")", nil
	case rowindex.EngineKeyMicros:
		return "timestamp", "unix_micros(" + k + ")", nil
	case rowindex.EngineKeyFloat, rowindex.EngineKeyDouble:
		st := "float"
		if t == rowindex.EngineKeyDouble {
			st = "double"
		}
		return st, "CASE WHEN " + k + " = 0 THEN CAST(0 AS DOUBLE) ELSE CAST(" + k + " AS DOUBLE) END", nil
	case rowindex.EngineKeyBool:
		return "boolean", k, nil
	case rowindex.EngineKeyString:
		return "string", k, nil
	case rowindex.EngineKeyBinary:
		return "binary", k, nil
	}
	return "", "", fmt.Errorf("sparkengine: key type %q is not read on Spark", t)
}

// RunSQL is the Spark SQL of a key-runs job over view viewRaw: the rows
// numbered within (file, key) by position; a row's position less its
// number is constant along a run of consecutive rows with one key (gaps
// and islands), so grouping by (file, key, that difference) gives each
// run's first row and length. Spark partitions by (file, key): no ordering
// of the whole result, no single partition.
//
// The same scan and aggregation also give each file's count record
// (rowindex.RunJob): the grouping set (file) adds one row per file with
// the rows the scan read (count(*)) and its non-null keys (count(k)),
// aggregated from the file's rows, not from the runs' groups; the build
// checks the runs against both. (A window count over the file would need
// all of a file's rows in one task; the grouping set keeps the (file, key)
// partitioning and is aggregated partially before the shuffle.)
func RunSQL(t rowindex.EngineKeyType) string {
	_, expr, err := keyRead(t)
	if err != nil {
		expr = "NULL"
	}
	f, p := quote(fileCol), quote(posCol)
	return fmt.Sprintf("SELECT file, k, first, rows, scanned FROM ("+
		"SELECT file, k, "+
		"CASE WHEN grouping_id() = 0 THEN min(pos) ELSE CAST(-1 AS BIGINT) END AS first, "+
		"CASE WHEN grouping_id() = 0 THEN count(*) ELSE count(k) END AS rows, "+
		"CASE WHEN grouping_id() = 0 THEN CAST(NULL AS BIGINT) ELSE count(*) END AS scanned, "+
		"grouping_id() AS gid FROM ("+
		"SELECT file, k, pos, pos - row_number() OVER (PARTITION BY file, k ORDER BY pos) AS g FROM ("+
		"SELECT %s AS file, %s AS k, %s AS pos FROM %s)) "+
		"GROUP BY GROUPING SETS ((file, k, g), (file))) "+
		"WHERE gid <> 0 OR k IS NOT NULL",
		f, expr, p, viewRaw)
}

var _ rowindex.EntryEngine = (*Engine)(nil)
