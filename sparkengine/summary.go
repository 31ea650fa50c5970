package sparkengine

import (
	"context"
	"fmt"
	"net/url"
	"path"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/schema"
)

// Summarize implements fileindex.SummaryEngine: one Spark scan per part of
// exactly job's files (the stored schema and read options, computed
// columns as Spark SQL), each file's distinct values, temporal maxima,
// ranges and row count aggregated by Spark, returned ordered by file as
// the records fileindex.SummaryJob describes. Spark only reads the data
// files; the index is written by the caller.
func (e *Engine) Summarize(ctx context.Context, job *fileindex.SummaryJob) (fileindex.JoinRows, error) {
	rows, err := e.run(ctx, "summarize", func(ctx context.Context, s *session) (*sparkRows, error) {
		return e.summarize(ctx, s, job)
	})
	if err != nil {
		return nil, err
	}
	return &fileRows{sparkRows: rows, files: jobFiles(job)}, nil
}

// jobFiles maps the comparable form of Spark's path of each of job's
// files to the file.
func jobFiles(job *fileindex.SummaryJob) map[string]string {
	files := make(map[string]string, len(job.Files))
	for _, f := range job.Files {
		files[pathKey(sparkPath(f))] = f
	}
	return files
}

// TableFiles implements fileindex.SummaryTableEngine: the records of a
// summary table name files by Spark's _metadata.file_path.
func (e *Engine) TableFiles(job *fileindex.SummaryJob) func(string) (string, bool) {
	files := jobFiles(job)
	return func(p string) (string, bool) {
		f, ok := files[pathKey(p)]
		return f, ok
	}
}

// SummarizeToTable implements fileindex.SummaryTableEngine: the same
// scans and aggregations as Summarize, but Spark's Delta writer writes the
// records to a new Delta table at uri (its version 0; the write fails if
// uri holds a table), clustered by file (every record of a file in one
// task, so in one data file, contiguous), and nothing comes back but the
// outcome. Spark needs write access to uri.
func (e *Engine) SummarizeToTable(ctx context.Context, job *fileindex.SummaryJob, uri string) error {
	return e.runCommands(ctx, "summarize", func(ctx context.Context, s *session) error {
		if err := e.summaryView(ctx, s, job); err != nil {
			return err
		}
		// Standard INT64 microsecond timestamps rather than Spark's
		// default INT96 (deprecated in Parquet).
		conf := msg("Command")
		set(conf, "sql_command.sql", "SET spark.sql.parquet.outputTimestampType=TIMESTAMP_MICROS")
		if err := s.command(ctx, "write summaries", conf); err != nil {
			return err
		}
		cmd, err := writeCommand(summarySQL(job, "CLUSTER BY file"), uri, fileindex.OutputDelta, fileindex.OutputErrorIfExists)
		if err != nil {
			return err
		}
		return s.command(ctx, "write summaries", cmd)
	})
}

func (e *Engine) summarize(ctx context.Context, s *session, job *fileindex.SummaryJob) (*sparkRows, error) {
	if err := e.summaryView(ctx, s, job); err != nil {
		return nil, err
	}
	return s.rows(ctx, "summarize", SummarySQL(job))
}

// summaryView defines view viewRaw for a summary job.
func (e *Engine) summaryView(ctx context.Context, s *session, job *fileindex.SummaryJob) error {
	// The files as read, with the path of each row's file: Spark's
	// _metadata column resolves on the scan itself (not through a view),
	// so the view is a projection of the scan.
	proj := msg("Relation")
	set(proj, "project.input", readRelation(job.Format, job.Schema, job.Options, job.Files))
	star := msg("Expression")
	set(star, "unresolved_star", msg("Expression.UnresolvedStar"))
	file := msg("Expression")
	set(file, "expression_string.expression", "_metadata.file_path AS "+quote(fileCol))
	exprs := []protoreflect.Message{star, file}
	if needsPosition(job) {
		// A row's position in its file, to pick the first of equal
		// floating-point values (SummarySQL).
		pos := msg("Expression")
		e := "monotonically_increasing_id()"
		if job.Format == "parquet" {
			e = "_metadata.row_index"
		}
		set(pos, "expression_string.expression", e+" AS "+quote(posCol))
		exprs = append(exprs, pos)
	}
	set(proj, "project.expressions", exprs)
	return s.command(ctx, "read files", createView(viewRaw, proj))
}

// fileCol is the file path column of the summary's input: Spark's own
// record of the file a row was read from.
const fileCol = "_ariadne_file"

// posCol is a row's position in its file (Parquet: Spark's row index;
// CSV and JSON, read as one partition per file below the split size:
// monotonically_increasing_id(), increasing in file order).
const posCol = "_ariadne_pos"

// isFloat reports a float or double value type, whose -0.0 and 0.0 are
// equal but render differently.
func isFloat(t schema.Type) bool {
	p, ok := t.(*schema.Primitive)
	return ok && (p.Name == "double" || p.Name == "float")
}

// needsPosition reports whether some part needs the rows' positions.
func needsPosition(job *fileindex.SummaryJob) bool {
	for _, p := range job.Parts {
		if isFloat(p.Type) && !p.Raw {
			return true
		}
	}
	return false
}

// SummarySQL is the Spark SQL of a summary job over view viewRaw: a union
// of one aggregation per part and one per file (row count and ranges), in
// the record layout of fileindex.SummaryJob, ordered by file. Columns a
// branch does not fill are NULL (Spark's union widens them to the filling
// branch's type).
func SummarySQL(job *fileindex.SummaryJob) string {
	return summarySQL(job, "ORDER BY file, part")
}

// summarySQL is SummarySQL with order as its ordering clause.
func summarySQL(job *fileindex.SummaryJob, order string) string {
	width := 0
	vcol := make([]int, len(job.Parts))
	for i, p := range job.Parts {
		vcol[i] = width
		width++
		if p.Kind == fileindex.SummaryTemporal {
			width++
		}
	}
	rcol := width
	width += 2 * len(job.Ranges)
	// slots renders the value columns with fill's expressions, NULL
	// elsewhere.
	slots := func(fill map[int]string) string {
		out := make([]string, width)
		for i := range out {
			e, ok := fill[i]
			if !ok {
				e = "NULL"
			}
			out[i] = fmt.Sprintf("%s AS s%d", e, i)
		}
		return strings.Join(out, ", ")
	}
	f := quote(fileCol)
	fill := map[int]string{}
	for i, r := range job.Ranges {
		fill[rcol+2*i] = "min(" + pathIdent(r, "") + ")"
		fill[rcol+2*i+1] = "max(" + pathIdent(r, "") + ")"
	}
	branches := []string{fmt.Sprintf("SELECT %s AS file, -1 AS part, count(*) AS rows, %s FROM t GROUP BY %s", f, slots(fill), f)}
	for i, p := range job.Parts {
		var from string
		fill := map[int]string{vcol[i]: "v"}
		// Spark's grouping makes -0.0 and 0.0 one value and returns 0.0;
		// the index keeps the first value of a file (Go's summaries and
		// DuckDB's list(DISTINCT)), and a bloom filter both renderings:
		// for floating-point values, whether the first (or this) value was
		// -0.0 comes along and restores it.
		fl := isFloat(p.Type)
		neg := func(v string) string { return "CAST(" + v + " AS STRING) = '-0.0'" }
		signed := "CASE WHEN neg THEN -v ELSE v END AS v"
		col := pathIdent(p.Column, "")
		switch {
		case p.Kind == fileindex.SummaryExploded && fl:
			from = fmt.Sprintf("(SELECT %s, %s FROM (SELECT %s, v, min_by(%s, struct(%s, epos)) AS neg FROM (SELECT %s, %s, posexplode(transform(%s, e -> %s)) AS (epos, v) FROM t) WHERE v IS NOT NULL GROUP BY %s, v))",
				f, signed, f, neg("v"), quote(posCol), f, quote(posCol), pathIdent(p.ArrayColumn, ""), pathIdent(p.Field, "e"), f)
		case p.Kind == fileindex.SummaryExploded:
			from = fmt.Sprintf("(SELECT DISTINCT %s, v FROM (SELECT %s, explode(transform(%s, e -> %s)) AS v FROM t) WHERE v IS NOT NULL)",
				f, f, pathIdent(p.ArrayColumn, ""), pathIdent(p.Field, "e"))
		case p.Kind == fileindex.SummaryTemporal && fl:
			from = fmt.Sprintf("(SELECT %s, %s, m FROM (SELECT %s, v, max(ts) AS m, min_by(%s, %s) AS neg FROM (SELECT %s, %s AS v, %s AS ts, %s FROM t) GROUP BY %s, v))",
				f, signed, f, neg("v"), quote(posCol), f, col, pathIdent(p.Timestamp, ""), quote(posCol), f)
			fill[vcol[i]+1] = "m"
		case p.Kind == fileindex.SummaryTemporal:
			from = fmt.Sprintf("(SELECT %s, v, max(ts) AS m FROM (SELECT %s, %s AS v, %s AS ts FROM t) GROUP BY %s, v)",
				f, f, col, pathIdent(p.Timestamp, ""), f)
			fill[vcol[i]+1] = "m"
		case fl && p.Raw:
			from = fmt.Sprintf("(SELECT %s, %s FROM (SELECT DISTINCT %s, %s AS v, %s AS neg FROM t WHERE %s IS NOT NULL))", f, signed, f, col, neg(col), col)
		case fl:
			from = fmt.Sprintf("(SELECT %s, %s FROM (SELECT %s, v, min_by(%s, %s) AS neg FROM (SELECT %s, %s AS v, %s FROM t WHERE %s IS NOT NULL) GROUP BY %s, v))",
				f, signed, f, neg("v"), quote(posCol), f, col, quote(posCol), col, f)
		default:
			from = fmt.Sprintf("(SELECT DISTINCT %s, %s AS v FROM t WHERE %s IS NOT NULL)", f, col, col)
		}
		branches = append(branches, fmt.Sprintf("SELECT %s AS file, %d AS part, NULL AS rows, %s FROM %s", f, i, slots(fill), from))
	}
	extra := f
	if needsPosition(job) {
		extra += ", " + quote(posCol)
	}
	return fmt.Sprintf("WITH t AS (SELECT %s, %s FROM %s) SELECT * FROM (%s) %s",
		computedColumns(job.Schema, job.Computed), extra, viewRaw, strings.Join(branches, " UNION ALL "), order)
}

// pathKey is the comparable form of a file URI: Spark reports file paths
// as Hadoop does (file:/x, percent-encoded), we name them file:///x.
func pathKey(p string) string {
	u, err := url.Parse(p)
	if err != nil || u.Scheme == "" {
		return p
	}
	return u.Scheme + "://" + u.Host + path.Clean(u.Path)
}

// fileRows are records (a summary's, key runs) whose first column is a
// file: Spark's file paths are replaced by the job's file URIs.
type fileRows struct {
	*sparkRows
	files map[string]string
}

func (r *fileRows) Next(ctx context.Context) ([][]any, error) {
	rows, err := r.sparkRows.Next(ctx)
	for _, row := range rows {
		p, _ := row[0].(string)
		f, ok := r.files[pathKey(p)]
		if !ok {
			return nil, &Error{Kind: KindExecution, Remote: r.s.c.remote, Op: r.op, Err: fmt.Errorf("Spark read %q, not a file of the job", p)}
		}
		row[0] = f
	}
	return rows, err
}

var _ fileindex.SummaryTableEngine = (*Engine)(nil)
