package delta

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
	"github.com/google/uuid"
)

// Version is this package's version, reported in commitInfo.engineInfo as
// "ariadne-go/<Version>".
const Version = "0.1.0"

// EngineInfo is the commitInfo.engineInfo of every commit we write.
const EngineInfo = "ariadne-go/" + Version

// ErrTableExists: Create found a table (a version 0 commit) already there.
var ErrTableExists = errors.New("delta: table already exists")

// ErrSchemaChange: written rows or a requested schema do not match the
// table's schema and the change is not allowed (schema evolution is
// additive: new nullable columns only; type changes are refused).
var ErrSchemaChange = errors.New("delta: schema change not allowed")

// CreateOptions configure a new table.
type CreateOptions struct {
	// PartitionColumns are top-level columns of primitive type whose values
	// name the data files' folders.
	PartitionColumns []string
	// Configuration is the table configuration (delta.* properties and
	// user keys).
	Configuration map[string]string
	// Protocol overrides the default protocol (reader 1, writer 2). It must
	// only require features this package writes (see checkWritable).
	Protocol *Protocol
	// Name and Description are the table's metaData name and description.
	Name, Description string
}

// defaultProtocol is what Spark gives a new table without special
// features: reader version 1, writer version 2 (appendOnly, invariants).
var defaultProtocol = Protocol{MinReaderVersion: 1, MinWriterVersion: 2}

// Create creates a table at the root of s with schema st, committing
// version 0 (protocol, metaData, commitInfo) by put-if-absent. It fails
// with ErrTableExists if version 0 exists. Create writes no data file.
func Create(ctx context.Context, s store.Store, st *schema.Struct, opts CreateOptions) (*Table, error) {
	if st == nil || len(st.Fields) == 0 {
		return nil, fmt.Errorf("%w: a table needs at least one column", ErrSchemaChange)
	}
	if err := checkSchemaWritable(st); err != nil {
		return nil, err
	}
	for _, c := range opts.PartitionColumns {
		f, ok := st.Field(c)
		if !ok {
			return nil, fmt.Errorf("delta: partition column %q is not in the schema", c)
		}
		switch f.Type.(type) {
		case *schema.Struct, *schema.Array, *schema.Map:
			return nil, fmt.Errorf("delta: partition column %q has type %s; partition columns must be primitive", c, f.Type)
		}
	}
	if len(opts.PartitionColumns) == len(st.Fields) {
		return nil, fmt.Errorf("delta: every column is a partition column; a table needs one data column")
	}
	p := defaultProtocol
	if opts.Protocol != nil {
		p = *opts.Protocol
	} else if containsType(st, "timestamp_ntz") {
		// timestamp_ntz columns need the timestampNtz table feature.
		p = Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"timestampNtz"}, WriterFeatures: []string{"timestampNtz"}}
		if strings.EqualFold(opts.Configuration["delta.appendOnly"], "true") {
			p.WriterFeatures = append(p.WriterFeatures, "appendOnly")
		}
	}
	if mode := opts.Configuration[ColumnMappingModeKey]; mode != "" && mode != string(MappingNone) {
		if !fullyMapped(st) {
			return nil, &UnsupportedFeatureError{Feature: "columnMapping (creating a table whose fields lack physical names and ids)", Op: "write"}
		}
	}
	now := time.Now().UnixMilli()
	md := Metadata{
		ID:               uuid.NewString(),
		Name:             opts.Name,
		Description:      opts.Description,
		Format:           Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:     st.Marshal(),
		PartitionColumns: append([]string{}, opts.PartitionColumns...),
		CreatedTime:      &now,
		Configuration:    maps.Clone(opts.Configuration),
	}
	if md.Configuration == nil {
		md.Configuration = map[string]string{}
	}
	if err := checkWritable(&p, &md, st, opWrite); err != nil {
		return nil, err
	}
	tx := &txn{
		op:       "CREATE TABLE",
		opParams: map[string]any{"isManaged": "false", "description": nullable(opts.Description), "partitionBy": jsonList(opts.PartitionColumns), "properties": jsonMap(md.Configuration)},
		actions:  []Action{{Protocol: &p}, {MetaData: &md}},
		readVer:  -1,
	}
	if err := tx.write(ctx, s, 0); err != nil {
		if errors.Is(err, store.ErrPrecondition) {
			return nil, fmt.Errorf("%w: %s exists", ErrTableExists, CommitKey(0))
		}
		return nil, err
	}
	return Open(ctx, s)
}

// WriteOptions configure Append and the rewrites of Delete, Upsert and
// Optimize.
type WriteOptions struct {
	// TargetFileSize is the estimated uncompressed size at which a data
	// file is closed and the next one started (default
	// DefaultTargetFileSize).
	TargetFileSize int64
	// Schema is the schema the rows are aligned with; nil means the
	// table's schema. When it differs from the table's, MergeSchema must be
	// set and the difference must be additive.
	Schema *schema.Struct
	// MergeSchema allows Schema to add new nullable columns (at the end,
	// or inside structs); the commit then carries the merged schema.
	MergeSchema bool
	// AppID and AppVersion, when AppID is set, record a txn action (the
	// idempotent-write marker): the commit fails with ErrConflict if the
	// table already holds a txn for AppID with a version ≥ AppVersion.
	AppID      string
	AppVersion int64
	// MaxCommitAttempts bounds retries after losing a commit race to a
	// compatible writer (default DefaultMaxCommitAttempts).
	MaxCommitAttempts int
	// OperationParameters are added to commitInfo.operationParameters.
	OperationParameters map[string]string
}

// DefaultTargetFileSize is the estimated uncompressed bytes per data file:
// 128 MiB, Spark's parquet.block.size, so an appended file is about one
// row group (about 30–60 MiB on storage after snappy).
const DefaultTargetFileSize = 128 << 20

func (o *WriteOptions) targetSize() int64 {
	if o.TargetFileSize > 0 {
		return o.TargetFileSize
	}
	return DefaultTargetFileSize
}

// Rows adapts a slice of rows to the iterator that Append takes.
func Rows(rows [][]any) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		for _, r := range rows {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// Append writes rows as new data files and commits them as a blind append
// (operation WRITE, mode Append). It returns the committed version. Rows
// are aligned with opts.Schema or the table's schema. Appends never conflict
// with other appends, deletes or upserts: on losing a commit race the
// transaction is rebased on the winner and retried. It conflicts only with
// a concurrent metadata or protocol change. Appending no rows commits
// nothing and returns the current version.
func (t *Table) Append(ctx context.Context, rows iter.Seq2[[]any, error], opts WriteOptions) (int64, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return 0, err
	}
	return t.appendAt(ctx, snap, rows, opts)
}

func (t *Table) appendAt(ctx context.Context, snap *Snapshot, rows iter.Seq2[[]any, error], opts WriteOptions) (int64, error) {
	meta := snap.Metadata()
	if err := checkWritable(&snap.protocol, &meta, snap.schema, opWrite); err != nil {
		return 0, err
	}
	tx := newTxn(t, snap, "WRITE", opts)
	tx.opParams["mode"] = "Append"
	tx.opParams["partitionBy"] = jsonList(meta.PartitionColumns)
	tx.blindAppend = true
	target, remap, err := tx.resolveSchema(opts)
	if err != nil {
		return 0, err
	}
	sink, err := tx.newSink(target, opts)
	if err != nil {
		return 0, err
	}
	for row, err := range rows {
		if err != nil {
			return 0, err
		}
		if remap != nil {
			row = remap(row)
		}
		if err := sink.write(ctx, row); err != nil {
			return 0, err
		}
	}
	adds, err := sink.close(ctx)
	if err != nil {
		return 0, err
	}
	if len(adds) == 0 && tx.newMeta == nil {
		return snap.Version(), nil
	}
	for i := range adds {
		tx.actions = append(tx.actions, Action{Add: &adds[i]})
	}
	return tx.commit(ctx)
}

// resolveSchema returns the schema rows are written with (the table's, or
// the merged one) and, when opts.Schema differs, a function aligning an
// input row with it.
func (tx *txn) resolveSchema(opts WriteOptions) (*schema.Struct, func([]any) []any, error) {
	cur := tx.snap.schema
	if opts.Schema == nil || schema.Equal(opts.Schema, cur) {
		return cur, nil, nil
	}
	merged, err := mergeSchemas(cur, opts.Schema)
	if err != nil {
		return nil, nil, err
	}
	if !schema.Equal(merged, cur) {
		if !opts.MergeSchema {
			return nil, nil, fmt.Errorf("%w: the rows' schema %s adds columns to the table's %s; set MergeSchema", ErrSchemaChange, opts.Schema, cur)
		}
		if tx.snap.colmap.mode != MappingNone {
			return nil, nil, &UnsupportedFeatureError{Feature: "schema evolution with columnMapping", Op: "write"}
		}
		if containsType(merged, "timestamp_ntz") && !slices.Contains(tx.snap.protocol.WriterFeatures, "timestampNtz") {
			return nil, nil, &UnsupportedFeatureError{Feature: "timestampNtz (adding a timestamp_ntz column needs a protocol upgrade)", Op: "write"}
		}
		md := tx.snap.Metadata()
		md.SchemaString = merged.Marshal()
		tx.newMeta = &md
		tx.actions = append(tx.actions, Action{MetaData: &md})
	}
	return merged, alignRow(opts.Schema, merged), nil
}

// mergeSchemas adds the fields of in that cur lacks (they must be
// nullable), recursing into structs; fields of cur that in lacks stay (and
// are written as null). Any type change is refused.
func mergeSchemas(cur, in *schema.Struct) (*schema.Struct, error) {
	out := &schema.Struct{Fields: slices.Clone(cur.Fields)}
	for _, f := range in.Fields {
		i := slices.IndexFunc(out.Fields, func(g schema.Field) bool { return g.Name == f.Name })
		if i < 0 {
			if !f.Nullable {
				return nil, fmt.Errorf("%w: new column %q must be nullable", ErrSchemaChange, f.Name)
			}
			out.Fields = append(out.Fields, f)
			continue
		}
		g := out.Fields[i]
		gs, ok1 := g.Type.(*schema.Struct)
		fs, ok2 := f.Type.(*schema.Struct)
		if ok1 && ok2 {
			m, err := mergeSchemas(gs, fs)
			if err != nil {
				return nil, err
			}
			g.Type = m
			out.Fields[i] = g
			continue
		}
		if !schema.Equal(g.Type, f.Type) {
			return nil, fmt.Errorf("%w: column %q has type %s in the table, %s in the rows", ErrSchemaChange, f.Name, g.Type, f.Type)
		}
	}
	return out, nil
}

// alignRow returns a function that rearranges a row of schema from into a
// row of schema to (which contains every field of from), nulls elsewhere.
func alignRow(from, to *schema.Struct) func([]any) []any {
	type move struct {
		src, dst int
		sub      func([]any) []any
	}
	var moves []move
	for i, f := range from.Fields {
		j := slices.IndexFunc(to.Fields, func(g schema.Field) bool { return g.Name == f.Name })
		m := move{src: i, dst: j}
		fs, ok1 := f.Type.(*schema.Struct)
		ts, ok2 := to.Fields[j].Type.(*schema.Struct)
		if ok1 && ok2 && !schema.Equal(fs, ts) {
			m.sub = alignRow(fs, ts)
		}
		moves = append(moves, m)
	}
	n := len(to.Fields)
	return func(row []any) []any {
		out := make([]any, n)
		for _, m := range moves {
			if m.src >= len(row) {
				continue
			}
			v := row[m.src]
			if m.sub != nil {
				if s, ok := v.([]any); ok {
					v = m.sub(s)
				}
			}
			out[m.dst] = v
		}
		return out
	}
}

// ---- data files ----

// sink writes rows into data files, one open file per partition, rolling
// files at the target size.
type sink struct {
	tx       *txn
	st       *schema.Struct // full logical schema of the rows
	data     *schema.Struct // the data (non-partition) columns, physical metadata kept
	dataPos  []int          // positions of data columns in a row
	partPos  []int          // positions of partition columns in a row
	partPhys []string       // physical names of partition columns
	target   int64
	open     map[string]*dataFile
	order    []string // partition dirs in first-seen order
	done     []AddFile
	seq      int
	wopts    pqrow.WriterOptions
}

// dataFile is one data file being written.
type dataFile struct {
	key  string
	rel  string
	part PartitionValues
	w    store.Writer
	cw   *store.CountingWriter
	pw   *pqrow.Writer
}

func (tx *txn) newSink(st *schema.Struct, opts WriteOptions) (*sink, error) {
	parts := tx.snap.metadata.PartitionColumns
	s := &sink{tx: tx, st: st, target: opts.targetSize(), open: map[string]*dataFile{}, data: &schema.Struct{}}
	s.wopts = pqrow.WriterOptions{
		PhysicalNames: tx.snap.colmap.mode != MappingNone,
		StatsColumns:  statsColumns(tx.snap.metadata.Configuration),
		CreatedBy:     EngineInfo,
		RowGroupBytes: min(s.target, pqrow.DefaultRowGroupBytes),
	}
	for i, f := range st.Fields {
		if slices.Contains(parts, f.Name) {
			s.partPos = append(s.partPos, i)
			s.partPhys = append(s.partPhys, PhysicalName(f))
			continue
		}
		s.data.Fields = append(s.data.Fields, f)
		s.dataPos = append(s.dataPos, i)
	}
	if len(s.partPos) != len(parts) {
		return nil, fmt.Errorf("delta: partition columns %v are not all in the schema %s", parts, st)
	}
	return s, nil
}

// statsColumns reads delta.dataSkippingNumIndexedCols (-1: all).
func statsColumns(conf map[string]string) int {
	if v, ok := conf["delta.dataSkippingNumIndexedCols"]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			switch {
			case n == 0:
				return pqrow.StatsNone
			case n < 0:
				return -1
			}
			return n
		}
	}
	return pqrow.DefaultStatsColumns
}

func (s *sink) write(ctx context.Context, row []any) error {
	if len(row) != len(s.st.Fields) {
		return fmt.Errorf("%w: row has %d values, the schema %d columns", ErrSchemaChange, len(row), len(s.st.Fields))
	}
	pv := PartitionValues{}
	var dir strings.Builder
	for i, p := range s.partPos {
		f := s.st.Fields[p]
		val, err := serializePartitionValue(f.Type, row[p])
		if err != nil {
			return fmt.Errorf("delta: partition column %q: %w", f.Name, err)
		}
		pv[s.partPhys[i]] = val
		dir.WriteString(escapePartitionName(s.partPhys[i]))
		dir.WriteByte('=')
		if val == nil {
			dir.WriteString(hiveDefaultPartition)
		} else {
			dir.WriteString(escapePartitionName(*val))
		}
		dir.WriteByte('/')
	}
	key := dir.String()
	df := s.open[key]
	if df == nil {
		var err error
		if df, err = s.startFile(ctx, key, pv); err != nil {
			return err
		}
		s.open[key] = df
		if !slices.Contains(s.order, key) {
			s.order = append(s.order, key)
		}
	}
	data := make([]any, len(s.dataPos))
	for i, p := range s.dataPos {
		data[i] = row[p]
	}
	if err := df.pw.Write(data); err != nil {
		return fmt.Errorf("delta: %w", err)
	}
	if df.pw.EstimatedSize() >= s.target {
		if err := s.finish(df); err != nil {
			return err
		}
		delete(s.open, key)
	}
	return nil
}

// hiveDefaultPartition names the folder of a null partition value.
const hiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"

func (s *sink) startFile(ctx context.Context, dir string, pv PartitionValues) (*dataFile, error) {
	name := fmt.Sprintf("part-%05d-%s-c000.snappy.parquet", s.seq, uuid.NewString())
	s.seq++
	rel := dir + name
	w, err := s.tx.t.st.NewWriter(ctx, rel, nil)
	if err != nil {
		return nil, err
	}
	cw := &store.CountingWriter{W: w}
	return &dataFile{key: rel, rel: rel, part: pv, w: w, cw: cw, pw: pqrow.NewWriter(cw, s.data, s.wopts)}, nil
}

func (s *sink) finish(df *dataFile) error {
	fs, err := df.pw.Close()
	if err != nil {
		df.w.Abort()
		return fmt.Errorf("delta: writing %s: %w", df.key, err)
	}
	if err := df.w.Close(); err != nil {
		return fmt.Errorf("delta: writing %s: %w", df.key, err)
	}
	s.done = append(s.done, AddFile{
		Path:             EncodePath(df.rel),
		PartitionValues:  df.part,
		Size:             df.cw.N,
		ModificationTime: time.Now().UnixMilli(),
		DataChange:       true,
		Stats:            fs.JSON(),
	})
	return nil
}

// close finishes every open file and returns their add actions (in the
// order the files were started).
func (s *sink) close(ctx context.Context) ([]AddFile, error) {
	var firstErr error
	for _, k := range s.order {
		df := s.open[k]
		if df == nil {
			continue
		}
		if err := s.finish(df); err != nil && firstErr == nil {
			firstErr = err
		}
		delete(s.open, k)
	}
	return s.done, firstErr
}

// abort discards open files (already finished files stay, unreferenced).
func (s *sink) abort() {
	for _, df := range s.open {
		df.w.Abort()
	}
	s.open = map[string]*dataFile{}
}

// escapePartitionName escapes a partition column name or value for a
// folder name as Spark does (ExternalCatalogUtils.escapePathName): control
// characters and "#%'*/:=?\{[]^ and DEL become %XX.
func escapePartitionName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// serializePartitionValue renders a partition value (PROTOCOL.md,
// "Partition Value Serialization"); nil and "" are null, as in Spark.
func serializePartitionValue(t schema.Type, v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	var s string
	switch x := v.(type) {
	case string:
		if x == "" {
			return nil, nil
		}
		s = x
	case []byte:
		s = string(x)
	case bool:
		s = strconv.FormatBool(x)
	case float32:
		s = strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case pqrow.Decimal:
		s = x.PlainString()
	case time.Time:
		p, _ := t.(*schema.Primitive)
		switch {
		case p != nil && p.Name == "date":
			s = x.Format("2006-01-02")
		case p != nil && p.Name == "timestamp_ntz":
			s = x.Format("2006-01-02 15:04:05.999999")
		default:
			s = x.UTC().Format("2006-01-02T15:04:05.000000Z")
		}
	default:
		i, ok := pqrow.AsInt64(v)
		if !ok {
			return nil, fmt.Errorf("value of Go type %T cannot be a partition value of type %s", v, t)
		}
		s = strconv.FormatInt(i, 10)
	}
	return &s, nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// containsType reports whether t has a primitive named name anywhere.
func containsType(t schema.Type, name string) bool {
	switch t := t.(type) {
	case *schema.Primitive:
		return t.Name == name
	case *schema.Array:
		return containsType(t.Element, name)
	case *schema.Map:
		return containsType(t.Key, name) || containsType(t.Value, name)
	case *schema.Struct:
		for _, f := range t.Fields {
			if containsType(f.Type, name) {
				return true
			}
		}
	}
	return false
}

// fullyMapped reports whether every struct field carries column-mapping
// metadata (a physical name and an id).
func fullyMapped(t schema.Type) bool {
	switch t := t.(type) {
	case *schema.Array:
		return fullyMapped(t.Element)
	case *schema.Map:
		return fullyMapped(t.Key) && fullyMapped(t.Value)
	case *schema.Struct:
		for _, f := range t.Fields {
			if _, ok := pqrow.FieldID(f); !ok || PhysicalName(f) == f.Name {
				return false
			}
			if !fullyMapped(f.Type) {
				return false
			}
		}
	}
	return true
}
