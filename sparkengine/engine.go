// Package sparkengine runs the data-reading part of Ariadne's work on
// Apache Spark through Spark Connect, for lakes too large for one machine:
// Ariadne locates in Go from its index, Spark reads only the located files
// and does the heavy work, and results come back as Arrow batches.
//
// It is a client of an existing Spark (a Spark Connect server, Spark 3.5+);
// it distributes nothing itself. Engine implements fileindex.Engine:
//
//	eng, err := sparkengine.New(ctx, "sc://spark-host:15002", sparkengine.Options{})
//	res, err := fi.Join(ctx, keys, []string{"user_id"}, fileindex.Inner, fileindex.JoinOptions{Engine: eng})
//
// The index side is read by Spark's own readers (csv, json, parquet) with
// the index's stored schema and read options; computed columns are the
// index's Spark SQL expressions evaluated by Spark; exploded columns use
// explode(transform(...)); temporal deduplication and the join are Spark
// SQL of the same shape as the embedded DuckDB engine's, so both engines
// give the same rows and schema. Every failure on the Spark side is an
// *Error (errors.Is(err, ErrSpark)) with a Kind.
package sparkengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/schema"
)

// Options configure an Engine.
type Options struct {
	// Timeout bounds each join, from its first request to its last batch
	// (0: no bound beyond the caller's context). Passing it fails the join
	// with an *Error of KindTimeout.
	Timeout time.Duration
	// KeysBatchRows is the number of key rows sent per Arrow batch
	// (default 65536).
	KeysBatchRows int
}

// Engine runs joins on one Spark Connect server. It is safe for concurrent
// use: each join runs in its own Spark session. Close it when done.
type Engine struct {
	c    *conn
	opts Options
}

// New returns an Engine for the Spark Connect server at remote
// ("sc://host:port", optionally ";token=...;user_id=..." parameters). The
// connection is made lazily; an unreachable server fails the first join
// with an *Error of KindConnection.
func New(ctx context.Context, remote string, opts Options) (*Engine, error) {
	if opts.KeysBatchRows <= 0 {
		opts.KeysBatchRows = 65536
	}
	c, err := dial(ctx, remote)
	if err != nil {
		return nil, err
	}
	return &Engine{c: c, opts: opts}, nil
}

// Close closes the connection.
func (e *Engine) Close() error { return e.c.close() }

// Name is "spark".
func (e *Engine) Name() string { return "spark" }

// Remote returns the Spark Connect URL.
func (e *Engine) Remote() string { return e.c.remote }

// Join runs job on Spark: the keys are sent as a local relation, the
// located files are read by one Spark scan with the stored schema and read
// options, and the join's rows stream back as Arrow batches.
func (e *Engine) Join(ctx context.Context, job *fileindex.JoinJob) (fileindex.JoinRows, error) {
	rows, err := e.run(ctx, "join", func(ctx context.Context, s *session) (*sparkRows, error) {
		return e.join(ctx, s, job)
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// run starts one request of op in a new session under the engine's
// timeout: on failure the error is classified and the session released;
// on success the returned rows own the context (closing them cancels it).
func (e *Engine) run(ctx context.Context, op string, start func(context.Context, *session) (*sparkRows, error)) (*sparkRows, error) {
	var cancel context.CancelFunc
	if e.opts.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, e.opts.Timeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	s := e.c.newSession()
	rows, err := start(ctx, s)
	if err != nil {
		err = e.classify(ctx, op, err)
		cancel()
		rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer rcancel()
		s.release(rctx)
		return nil, err
	}
	rows.cancel = cancel
	return rows, nil
}

// runCommands runs commands (do) in a new session under the engine's
// timeout, classifies a failure, and releases the session.
func (e *Engine) runCommands(ctx context.Context, op string, do func(context.Context, *session) error) error {
	var cancel context.CancelFunc
	if e.opts.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, e.opts.Timeout)
	} else {
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	s := e.c.newSession()
	err := do(ctx, s)
	if err != nil {
		err = e.classify(ctx, op, err)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()
	s.release(rctx)
	return err
}

// classify makes err an *Error: a timeout or cancellation of the join's
// context is one whatever reported it (reading the keys, a request).
func (e *Engine) classify(ctx context.Context, op string, err error) error {
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Remote: e.c.remote, Op: op, Err: err}
	case errors.Is(ctx.Err(), context.Canceled):
		return &Error{Kind: KindCanceled, Remote: e.c.remote, Op: op, Err: err}
	}
	return err
}

// viewKeys and viewRaw are the session's temporary views: the keys, and
// the located files as read.
const (
	viewKeys = "ariadne_keys"
	viewRaw  = "ariadne_raw"
)

func (e *Engine) join(ctx context.Context, s *session, job *fileindex.JoinJob) (*sparkRows, error) {
	// The keys: a local relation, in batches, unioned.
	keys, err := e.keysRelation(ctx, job.Keys)
	if err != nil {
		return nil, err
	}
	if err := s.command(ctx, "send keys", createView(viewKeys, keys)); err != nil {
		return nil, err
	}
	// The located files: one scan of exactly those paths.
	if err := s.readFiles(ctx, "read located files", job.Format, job.Schema, job.Options, job.Files); err != nil {
		return nil, err
	}
	query := JoinSQL(job)
	if job.Output != "" {
		// Spark writes the rows; only the schema comes back (LIMIT 0 is
		// planned as an empty relation: nothing is read twice).
		cmd, err := writeCommand(query, job.Output, job.OutputFormat, job.OutputMode)
		if err != nil {
			return nil, err
		}
		// Spark 3.5 sends no scan metrics with a command's responses: a
		// written join reports no files or bytes read.
		if err := s.command(ctx, "write output", cmd); err != nil {
			return nil, err
		}
		query = "SELECT * FROM (" + query + ") LIMIT 0"
	}
	return s.rows(ctx, "join", query)
}

// saveModes are Spark Connect's WriteOperation.SaveMode values by our
// output modes.
var saveModes = map[string]string{
	"":                            "SAVE_MODE_ERROR_IF_EXISTS",
	fileindex.OutputErrorIfExists: "SAVE_MODE_ERROR_IF_EXISTS",
	fileindex.OutputOverwrite:     "SAVE_MODE_OVERWRITE",
	fileindex.OutputAppend:        "SAVE_MODE_APPEND",
}

// writeCommand is the command that has Spark write query's rows to path
// with its Parquet or Delta writer (df.write.format(f).mode(m).save(path)).
// Spark's Delta writer commits the whole output as one table version: a
// write that fails or is cut before its commit leaves no new version
// (only data files no version lists, which VACUUM removes).
func writeCommand(query, path, format, mode string) (protoreflect.Message, error) {
	switch format {
	case "":
		format = fileindex.OutputParquet
	case fileindex.OutputParquet, fileindex.OutputDelta:
	default:
		return nil, fmt.Errorf("sparkengine: output format %q: want parquet or delta", format)
	}
	name, ok := saveModes[mode]
	if !ok {
		return nil, fmt.Errorf("sparkengine: output mode %q: want error, overwrite or append", mode)
	}
	in := msg("Relation")
	set(in, "sql.query", query)
	cmd := msg("Command")
	set(cmd, "write_operation.input", in)
	set(cmd, "write_operation.source", format)
	set(cmd, "write_operation.path", sparkPath(path))
	wo := get(cmd, "write_operation")
	ev := field(wo, "mode").Enum().Values().ByName(protoreflect.Name(name))
	if ev == nil {
		// The protocol's enum is linked in; a missing value is a build defect.
		panic("sparkengine: Spark Connect has no save mode " + name)
	}
	set(cmd, "write_operation.mode", ev.Number())
	return cmd, nil
}

// readFiles defines view viewRaw as Spark's scan of exactly files, with the
// stored schema and read options.
func (s *session) readFiles(ctx context.Context, op, format string, st *schema.Struct, options map[string]string, files []string) error {
	return s.command(ctx, op, createView(viewRaw, readRelation(format, st, options, files)))
}

// readRelation is Spark's scan of exactly files.
func readRelation(format string, st *schema.Struct, options map[string]string, files []string) protoreflect.Message {
	read := msg("Relation")
	set(read, "read.data_source.format", format)
	set(read, "read.data_source.schema", st.Marshal())
	set(read, "read.data_source.options", options)
	set(read, "read.data_source.paths", sparkPaths(files))
	return read
}

// rows runs query in s and returns its rows as they stream back.
func (s *session) rows(ctx context.Context, op, query string) (*sparkRows, error) {
	rel := msg("Relation")
	set(rel, "sql.query", query)
	st, err := s.query(ctx, op, rel)
	if err != nil {
		return nil, err
	}
	r := &sparkRows{s: s, st: st, op: op}
	br := &batchReader{pull: r.pull}
	// Spark sends at least one batch (empty for an empty result), which
	// carries the schema.
	data, err := r.pull()
	if err != nil {
		if errors.Is(err, errEnd) {
			err = &Error{Kind: KindExecution, Remote: s.c.remote, Op: op, Err: errors.New("the result had no Arrow batch")}
		}
		return nil, err
	}
	sch, recs, err := decodeBatch(data)
	if err != nil {
		return nil, &Error{Kind: KindExecution, Remote: s.c.remote, Op: op, Err: err}
	}
	br.schema, br.first = sch, recs
	src, err := fileindex.ArrowSource(br)
	if err != nil {
		br.release()
		return nil, err
	}
	r.src, r.br = src, br
	return r, nil
}

// keysRelation reads every key row and returns a relation of them.
func (e *Engine) keysRelation(ctx context.Context, keys fileindex.KeySource) (protoreflect.Message, error) {
	st := keys.Schema()
	var rel protoreflect.Message
	var pending [][]any
	flush := func() error {
		data, err := keysIPC(st, pending)
		if err != nil {
			return err
		}
		pending = pending[:0]
		lr := msg("Relation")
		set(lr, "local_relation.data", data)
		set(lr, "local_relation.schema", st.Marshal())
		if rel == nil {
			rel = lr
			return nil
		}
		u := msg("Relation")
		set(u, "set_op.left_input", rel)
		set(u, "set_op.right_input", lr)
		set(u, "set_op.set_op_type", protoreflect.EnumNumber(2)) // SET_OP_TYPE_UNION
		set(u, "set_op.is_all", true)
		rel = u
		return nil
	}
	for {
		b, err := keys.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		pending = append(pending, b...)
		if len(pending) >= e.opts.KeysBatchRows {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if len(pending) > 0 || rel == nil {
		if err := flush(); err != nil {
			return nil, err
		}
	}
	return rel, nil
}

func createView(name string, input protoreflect.Message) protoreflect.Message {
	cmd := msg("Command")
	set(cmd, "create_dataframe_view.input", input)
	set(cmd, "create_dataframe_view.name", name)
	set(cmd, "create_dataframe_view.is_global", false)
	set(cmd, "create_dataframe_view.replace", true)
	return cmd
}

// sparkPaths turns our object URIs into paths Spark's Hadoop file systems
// read: file:///x stays (Hadoop's local file system), s3://b/k becomes
// s3a://b/k (the S3A connector; Spark has no s3:// file system by default),
// gs:// and others are passed as they are. Glob characters are escaped:
// a located file is one file, never a pattern.
func sparkPaths(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = escapeGlob(sparkPath(f))
	}
	return out
}

// sparkPath maps one object URI to the Hadoop file system Spark uses for it.
func sparkPath(uri string) string {
	if rest, ok := strings.CutPrefix(uri, "s3://"); ok {
		return "s3a://" + rest
	}
	return uri
}

// escapeGlob escapes Hadoop glob metacharacters with a backslash.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`\*?[]{}`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// sparkRows streams a join's Arrow batches as rows.
type sparkRows struct {
	s      *session
	op     string
	st     *stream
	src    fileindex.KeySource // ArrowSource over br
	br     *batchReader
	cancel context.CancelFunc

	mu                sync.Mutex
	files, bytes      int64
	haveMetrics, done bool
	closed            bool
}

// pull returns the next Arrow batch's IPC bytes, collecting the scan
// metrics the server sends at the end; errEnd after the last.
func (r *sparkRows) pull() ([]byte, error) {
	for {
		resp, err := r.st.recv()
		if errors.Is(err, io.EOF) {
			r.mu.Lock()
			r.done = true
			r.mu.Unlock()
			return nil, errEnd
		}
		if err != nil {
			return nil, err
		}
		if m := get(resp, "metrics"); m != nil {
			r.addMetrics(m)
		}
		if b := get(resp, "arrow_batch"); b != nil {
			return b.Get(field(b, "data")).Bytes(), nil
		}
	}
}

// addMetrics sums the file scans' "number of files read" and "size of
// files read".
func (r *sparkRows) addMetrics(m protoreflect.Message) {
	objs := m.Get(field(m, "metrics")).List()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range objs.Len() {
		o := objs.Get(i).Message()
		em := o.Get(field(o, "execution_metrics")).Map()
		em.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			mv := v.Message()
			val := mv.Get(field(mv, "value")).Int()
			switch k.String() {
			case "numFiles":
				r.files += val
				r.haveMetrics = true
			case "filesSize":
				r.bytes += val
				r.haveMetrics = true
			}
			return true
		})
	}
}

func (r *sparkRows) Schema() *schema.Struct { return r.src.Schema() }

func (r *sparkRows) Next(ctx context.Context) ([][]any, error) {
	rows, err := r.src.Next(ctx)
	if err != nil && !errors.Is(err, io.EOF) {
		var se *Error
		if !errors.As(err, &se) {
			err = &Error{Kind: KindExecution, Remote: r.s.c.remote, Op: r.op, Err: err}
		}
	}
	return rows, err
}

// ReadStats implements fileindex.EngineReadStats.
func (r *sparkRows) ReadStats() (files, bytes int64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.files, r.bytes, r.haveMetrics
}

func (r *sparkRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.br.release()
	r.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.s.release(ctx)
	return nil
}

// quote quotes a Spark SQL identifier.
func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// pathIdent quotes a dotted path, optionally under a lambda variable.
func pathIdent(path, under string) string {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		parts[i] = quote(p)
	}
	if under != "" {
		return under + "." + strings.Join(parts, ".")
	}
	return strings.Join(parts, ".")
}

// computedColumns is the select list of the columns read with the computed
// columns applied: each replaces the column of its name or is appended;
// all see the columns read (Spark's withColumn).
func computedColumns(st *schema.Struct, computed []fileindex.Computed) string {
	names := st.Names()
	exprs := make([]string, len(names))
	for i, c := range names {
		exprs[i] = quote(c)
	}
	for _, c := range computed {
		e := "(" + c.Expr + ")"
		if i := slices.Index(names, c.Name); i >= 0 {
			exprs[i] = e
		} else {
			names = append(names, c.Name)
			exprs = append(exprs, e)
		}
	}
	parts := make([]string, len(names))
	for i := range names {
		parts[i] = exprs[i] + " AS " + quote(names[i])
	}
	return strings.Join(parts, ", ")
}

// JoinSQL is the Spark SQL of a job over the views of the keys and the
// located files: the same statement shape as the embedded DuckDB engine's
// (computed columns as withColumn, exploded aliases, temporal ranks over
// the original rows filtered together, USING-style output columns).
func JoinSQL(job *fileindex.JoinJob) string {
	idx := "SELECT " + computedColumns(job.Schema, job.Computed) + " FROM " + viewRaw
	for _, e := range job.Exploded {
		idx = fmt.Sprintf("SELECT *, explode(transform(%s, e -> %s)) AS %s FROM (%s)",
			pathIdent(e.ArrayColumn, ""), pathIdent(e.FieldPath, "e"), quote(e.AsColumn), idx)
	}
	if len(job.Temporal) > 0 {
		cols := make([]string, len(job.Temporal))
		conds := make([]string, len(job.Temporal))
		for i, t := range job.Temporal {
			cols[i] = fmt.Sprintf("(row_number() OVER (PARTITION BY %s ORDER BY %s DESC NULLS LAST) = 1) AS _ariadne_temporal_keep_%d",
				quote(t.Column), pathIdent(t.TimestampColumn, ""), i)
			conds[i] = fmt.Sprintf("_ariadne_temporal_keep_%d", i)
		}
		idx = fmt.Sprintf("SELECT * FROM (SELECT *, %s FROM (%s)) WHERE %s", strings.Join(cols, ", "), idx, strings.Join(conds, " AND "))
	}
	sel := make([]string, len(job.IndexColumns))
	for i, c := range job.IndexColumns {
		sel[i] = quote(c)
	}
	idx = "SELECT " + strings.Join(sel, ", ") + " FROM (" + idx + ")"

	keyCols := job.Keys.Schema().Names()
	leftSQL, leftCols := "SELECT * FROM "+viewKeys, keyCols
	rightSQL, rightCols := idx, job.IndexColumns
	if job.IndexOnLeft {
		leftSQL, leftCols, rightSQL, rightCols = rightSQL, rightCols, leftSQL, leftCols
	}
	conds := make([]string, len(job.On))
	for i, c := range job.On {
		conds[i] = fmt.Sprintf("l.%s = r.%s", quote(c), quote(c))
	}
	var out []string
	if job.How == fileindex.Semi || job.How == fileindex.Anti {
		for _, c := range leftCols {
			out = append(out, "l."+quote(c))
		}
	} else {
		for _, c := range job.On {
			switch job.How {
			case fileindex.Right:
				out = append(out, "r."+quote(c)+" AS "+quote(c))
			case fileindex.Full:
				out = append(out, fmt.Sprintf("coalesce(l.%s, r.%s) AS %s", quote(c), quote(c), quote(c)))
			default:
				out = append(out, "l."+quote(c)+" AS "+quote(c))
			}
		}
		for _, c := range leftCols {
			if !slices.Contains(job.On, c) {
				out = append(out, "l."+quote(c))
			}
		}
		for _, c := range rightCols {
			if !slices.Contains(job.On, c) {
				out = append(out, "r."+quote(c))
			}
		}
	}
	kind := map[fileindex.JoinType]string{
		fileindex.Inner: "INNER JOIN", fileindex.Left: "LEFT OUTER JOIN", fileindex.Right: "RIGHT OUTER JOIN",
		fileindex.Full: "FULL OUTER JOIN", fileindex.Semi: "LEFT SEMI JOIN", fileindex.Anti: "LEFT ANTI JOIN",
	}[job.How]
	return fmt.Sprintf("SELECT %s FROM (%s) AS l %s (%s) AS r ON %s",
		strings.Join(out, ", "), leftSQL, kind, rightSQL, strings.Join(conds, " AND "))
}
