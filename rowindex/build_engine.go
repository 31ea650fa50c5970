package rowindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// Entries computed by another engine (Apache Spark, package sparkengine):
// the engine reads the key column of a batch of data files and returns its
// runs — per file, maximal stretches of consecutive rows with one non-null
// key value, by the row's position in the file (Spark's
// _metadata.row_index). Everything else is this package's ordinary build:
// the footers are read here (sizes, CRCs, page locations, row group
// boundaries), a run is cut at row group boundaries into the entries the
// local scan emits (row group, first row in the group, run length), and
// the entries go through the same sort buffers, spills, merge, fragment
// writer and manifest commit. The engine only reads data files; it never
// writes the row index.

// EngineKeyType says how an engine reads a key column and renders its
// values in a RunJob's records. Each is one Parquet physical/logical type
// the build supports on an engine; other key types are refused with a
// message (build without the engine).
type EngineKeyType string

// The key types of a RunJob, with the Go type of their record values.
const (
	EngineKeyInt8    EngineKeyType = "int8"    // INT32 INT(8, signed): int64
	EngineKeyInt16   EngineKeyType = "int16"   // INT32 INT(16, signed): int64
	EngineKeyInt32   EngineKeyType = "int32"   // INT32 (plain or INT(32, signed)): int64
	EngineKeyInt64   EngineKeyType = "int64"   // INT64 (plain or INT(64, signed)): int64
	EngineKeyDate    EngineKeyType = "date"    // INT32 DATE: days since the epoch, int64
	EngineKeyMillis  EngineKeyType = "millis"  // INT64 TIMESTAMP(MILLIS, UTC): ms since the epoch, int64
	EngineKeyMicros  EngineKeyType = "micros"  // INT64 TIMESTAMP(MICROS, UTC): µs since the epoch, int64
	EngineKeyFloat   EngineKeyType = "float"   // FLOAT: float64
	EngineKeyDouble  EngineKeyType = "double"  // DOUBLE: float64
	EngineKeyBool    EngineKeyType = "boolean" // BOOLEAN: bool
	EngineKeyString  EngineKeyType = "string"  // BYTE_ARRAY STRING/ENUM/JSON: string
	EngineKeyBinary  EngineKeyType = "binary"  // BYTE_ARRAY without annotation: []byte
	engineKeyUnknown EngineKeyType = ""
)

// RunJob is one batch of data files whose key runs an engine computes.
// The engine reads column Key (top-level, of type KeyType in every file)
// of exactly Files, and returns records (RunRows) with the columns
//
//	file   string  the file (one of Files, as given)
//	key    any     the key value (Go type as EngineKeyType says)
//	first  int64   the run's first row: its position in the file (0-based)
//	rows   int64   the run's length, ≥ 1
//	scanned int64  null (the column of count records)
//
// one per maximal run of consecutive rows of a file with equal non-null
// keys (null keys are not indexed). Records come in any order; runs may
// span row groups (the build cuts them). Every engine also sends, for
// every file of the job that has a row, one count record, told
// apart by first = -1: the file, a null key, first -1, rows = the file's
// non-null keys, scanned = the rows its scan read of the file, both
// counted by the engine apart from the runs. The build checks that the
// scan read every row of the footer and that the file's runs cover
// exactly its non-null keys, and fails otherwise (a run lost between the
// engine's scan and the build would otherwise leave its keys out of the
// row index without a trace).
type RunJob struct {
	Key     string
	KeyType EngineKeyType
	Files   []string
}

// RunRows are an engine's records, in batches.
type RunRows interface {
	// Next returns the next batch of records, (nil, io.EOF) at the end.
	Next(ctx context.Context) ([][]any, error)
	Close() error
}

// EngineReadStats is implemented by RunRows whose engine reports what its
// scans read (Spark's scan metrics); final once Next returned io.EOF.
type EngineReadStats interface {
	ReadStats() (files, bytes int64, ok bool)
}

// EntryEngine computes a row index's key runs elsewhere (WithEngine):
// package sparkengine's Engine on Apache Spark.
type EntryEngine interface {
	// Name names the engine in errors ("spark").
	Name() string
	// KeyRuns runs job and returns its records; the caller closes them.
	KeyRuns(ctx context.Context, job *RunJob) (RunRows, error)
}

// DefaultEngineBatchFiles is the number of files one request to an entry
// engine covers (WithEngine's batch 0): the runs of a request stream back
// unordered, so a batch bounds only the work lost to a failed request and
// the engine's plan size, not memory here.
const DefaultEngineBatchFiles = 16

// WithEngine makes a build read the data files' key columns on eng, batch
// files per request (0: DefaultEngineBatchFiles), instead of in this
// process. Row indexes with cover columns or aggregates are refused
// (their values are decoded here only).
func WithEngine(eng EntryEngine, batch int) BuildOption {
	return func(c *buildConfig) { c.engine, c.engineBatch = eng, batch }
}

// WithEngineWhereSupported is WithEngine for builds the engine can do,
// and the local build for the others: row indexes with cover columns or
// aggregates, and builds whose files hold a key type the engine does not
// read. It is what `update --engine spark` uses for every row index.
func WithEngineWhereSupported(eng EntryEngine, batch int) BuildOption {
	return func(c *buildConfig) { c.engine, c.engineBatch, c.engineOptional = eng, batch, true }
}

// errEngineUnsupported: an optional engine cannot build this one (the
// build falls back to the local scan).
var errEngineUnsupported = errors.New("rowindex: not built on the engine")

// engineKeyType returns the EngineKeyType of a Parquet key column, or why
// an engine cannot build it.
func engineKeyType(t parquet.Type) (EngineKeyType, string) {
	lt := t.LogicalType()
	var v format.LogicalTypeValue
	if lt != nil {
		v = lt.Value
	}
	switch t.Kind() {
	case parquet.Boolean:
		if v == nil {
			return EngineKeyBool, ""
		}
	case parquet.Int32:
		switch x := v.(type) {
		case nil:
			return EngineKeyInt32, ""
		case *format.DateType:
			return EngineKeyDate, ""
		case *format.IntType:
			if x.IsSigned {
				switch x.BitWidth {
				case 8:
					return EngineKeyInt8, ""
				case 16:
					return EngineKeyInt16, ""
				case 32:
					return EngineKeyInt32, ""
				}
			}
		}
	case parquet.Int64:
		switch x := v.(type) {
		case nil:
			return EngineKeyInt64, ""
		case *format.IntType:
			if x.IsSigned && x.BitWidth == 64 {
				return EngineKeyInt64, ""
			}
		case *format.TimestampType:
			if x.IsAdjustedToUTC {
				switch x.Unit.Value.(type) {
				case *format.MilliSeconds:
					return EngineKeyMillis, ""
				case *format.MicroSeconds:
					return EngineKeyMicros, ""
				}
			}
		}
	case parquet.Float:
		if v == nil {
			return EngineKeyFloat, ""
		}
	case parquet.Double:
		if v == nil {
			return EngineKeyDouble, ""
		}
	case parquet.ByteArray:
		switch v.(type) {
		case nil:
			return EngineKeyBinary, ""
		case *format.StringType, *format.EnumType, *format.JsonType:
			return EngineKeyString, ""
		}
	}
	return engineKeyUnknown, fmt.Sprintf("key type %s is not built on an engine (build without it)", t)
}

// engineFile is one data file of an engine build.
type engineFile struct {
	r     *scanResult
	ktype EngineKeyType
}

// scanOn is scanAll with the key runs computed by the configured engine:
// footers are read here (buildWorkers at a time), the usable files are
// sent to the engine in batches of files of one key type, and each batch's
// runs are cut into entries in one sort buffer (spilled when full). As in
// scanAll, the first failure fails the build.
func (b *builder) scanOn(ctx context.Context, m *meter, res Resolver, firstID int32, uris []string) ([]scanResult, error) {
	def := b.def
	if len(def.Cover) > 0 || len(def.Aggregates) > 0 {
		if b.cfg.engineOptional {
			return nil, errEngineUnsupported
		}
		return nil, fmt.Errorf("%w: row index %s: cover columns and aggregates are not built on the %s engine (build without it)", ErrBadQuery, def.Name, b.cfg.engine.Name())
	}
	results := make([]scanResult, len(uris))
	files := make([]engineFile, len(uris))
	for i := range files {
		files[i].r = &results[i]
	}
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(buildWorkers, max(len(uris), 1)) {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(uris) {
					return
				}
				r := &results[i]
				r.fe.URI, r.fe.ID = uris[i], firstID+int32(i)
				sf, err := openScan(ctx, m, res, def, &r.fe, &r.scanR, &r.scanB)
				if err == nil {
					r.class = sf.class
					var why string
					if files[i].ktype, why = engineKeyType(sf.f.Root().Column(def.Key).Type()); why != "" {
						err = &ColumnError{URI: r.fe.URI, Column: def.Key, Reason: why}
						if b.cfg.engineOptional {
							err = errEngineUnsupported
						}
					}
				}
				if u := (*unusableFile)(nil); errors.As(err, &u) {
					r.skip = u.reason()
					continue
				}
				if err != nil {
					r.err = err
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range results {
		if errors.Is(results[i].err, errEngineUnsupported) {
			return nil, errEngineUnsupported
		}
	}
	for i := range results {
		if results[i].err != nil {
			return results, nil // build reports the first failure in file order
		}
	}
	// Batches of one key type, in file order.
	byType := map[EngineKeyType][]engineFile{}
	var types []EngineKeyType
	for _, f := range files {
		if f.r.skip != "" {
			continue
		}
		if _, ok := byType[f.ktype]; !ok {
			types = append(types, f.ktype)
		}
		byType[f.ktype] = append(byType[f.ktype], f)
	}
	batch := b.cfg.engineBatch
	if batch <= 0 {
		batch = DefaultEngineBatchFiles
	}
	w := newScanWorker(b)
	for _, t := range types {
		fs := byType[t]
		for s := 0; s < len(fs); s += batch {
			if err := b.runBatch(ctx, w, t, fs[s:min(s+batch, len(fs))]); err != nil {
				return nil, err
			}
		}
	}
	if len(w.rb.refs) > 0 {
		w.rb.sort()
		b.mems = append(b.mems, w.rb)
	}
	return results, nil
}

// runBatch has the engine compute the runs of one batch and emits their
// entries. Records are checked against the footers: a run must lie within
// its file's rows and name a file of the batch.
func (b *builder) runBatch(ctx context.Context, w *scanWorker, t EngineKeyType, fs []engineFile) error {
	eng := b.cfg.engine
	job := &RunJob{Key: b.def.Key, KeyType: t}
	byURI := make(map[string]*scanResult, len(fs))
	for _, f := range fs {
		job.Files = append(job.Files, f.r.fe.URI)
		byURI[f.r.fe.URI] = f.r
	}
	rows, err := eng.KeyRuns(ctx, job)
	if err != nil {
		return err
	}
	defer rows.Close()
	counts := &keyCounts{covered: map[string]int64{}, counted: map[string][2]int64{}}
	var key []byte
	for {
		recs, err := rows.Next(ctx)
		for _, rec := range recs {
			var emitErr error // not err: Next's error is checked after its records
			switch {
			case len(rec) != 5:
				emitErr = fmt.Errorf("a record has %d columns, want 5 (file, key, first, rows, scanned)", len(rec))
			case rec[2] == int64(-1):
				emitErr = counts.count(byURI, rec)
			default:
				if key, emitErr = b.emitRun(w, t, byURI, rec[:4], key[:0]); emitErr == nil {
					counts.covered[rec[0].(string)] += rec[3].(int64)
				}
			}
			if emitErr != nil {
				return fmt.Errorf("rowindex: %s engine: %w", eng.Name(), emitErr)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	if err := counts.check(fs); err != nil {
		return fmt.Errorf("rowindex: %s engine: %w", eng.Name(), err)
	}
	if rs, ok := rows.(EngineReadStats); ok {
		if files, bytes, ok := rs.ReadStats(); ok {
			b.engineFiles.Add(files)
			b.engineBytes.Add(bytes)
		}
	}
	w.countEntries()
	for _, f := range fs {
		b.filesDone.Add(1)
		b.rows.Add(f.r.fe.Rows)
		b.dataBytes.Add(f.r.fe.Size)
	}
	return nil
}

// keyCounts holds a batch's count records and what its runs covered.
type keyCounts struct {
	covered map[string]int64    // file → rows covered by its runs
	counted map[string][2]int64 // file → rows scanned, non-null keys
}

// count takes one count record (file, null, -1, non-null keys, rows
// scanned).
func (c *keyCounts) count(byURI map[string]*scanResult, rec []any) error {
	uri, _ := rec[0].(string)
	if _, ok := byURI[uri]; !ok {
		return fmt.Errorf("a count record names %q, not a file of the batch", uri)
	}
	keys, ok1 := rec[3].(int64)
	scanned, ok2 := rec[4].(int64)
	if !ok1 || !ok2 || rec[1] != nil {
		return fmt.Errorf("%s: count record (%v, %v, %v) is not a null key and two integers", uri, rec[1], rec[3], rec[4])
	}
	if _, dup := c.counted[uri]; dup {
		return fmt.Errorf("%s: two count records", uri)
	}
	c.counted[uri] = [2]int64{scanned, keys}
	return nil
}

// check compares every file's counts with its footer and its runs.
func (c *keyCounts) check(fs []engineFile) error {
	for _, f := range fs {
		fe := &f.r.fe
		got, ok := c.counted[fe.URI]
		switch {
		case !ok && fe.Rows > 0:
			return fmt.Errorf("%s: no count record for a file of %d rows (a part of the engine's answer is missing)", fe.URI, fe.Rows)
		case ok && got[0] != fe.Rows:
			return fmt.Errorf("%s: the engine's scan read %d rows, the footer has %d", fe.URI, got[0], fe.Rows)
		case ok && got[1] != c.covered[fe.URI]:
			return fmt.Errorf("%s: the engine counted %d non-null keys, its runs cover %d rows (runs were lost or made up)", fe.URI, got[1], c.covered[fe.URI])
		}
	}
	return nil
}

// emitRun checks one record and emits its entries (one per row group the
// run touches); key is a reusable buffer.
func (b *builder) emitRun(w *scanWorker, t EngineKeyType, byURI map[string]*scanResult, rec []any, key []byte) ([]byte, error) {
	if len(rec) != 4 {
		return key, fmt.Errorf("a record has %d columns, want 4 (file, key, first, rows)", len(rec))
	}
	uri, _ := rec[0].(string)
	r, ok := byURI[uri]
	if !ok {
		return key, fmt.Errorf("a record names %q, not a file of the batch", uri)
	}
	first, ok1 := rec[2].(int64)
	n, ok2 := rec[3].(int64)
	if !ok1 || !ok2 || first < 0 || n < 1 || first > r.fe.Rows-n {
		return key, fmt.Errorf("%s: run (%v, %v) is not within the file's %d rows", uri, rec[2], rec[3], r.fe.Rows)
	}
	key, err := appendEngineKey(key, t, rec[1])
	if err != nil {
		return key, fmt.Errorf("%s: %w", uri, err)
	}
	bucket := w.bucket(key)
	starts := r.fe.RowGroupStarts
	rg := sort.Search(len(starts), func(i int) bool { return starts[i] > first }) - 1
	for n > 0 {
		end := r.fe.Rows
		if rg+1 < len(starts) {
			end = starts[rg+1]
		}
		take := min(n, end-first)
		if take > 0 {
			if err := w.emit(bucket, key, r.fe.ID, int32(rg), first-starts[rg], take, nil); err != nil {
				return key, err
			}
		}
		first += take
		n -= take
		rg++
	}
	return key, nil
}

// appendEngineKey appends the key encoding of a record's key value of type
// t: the encoding a local scan gives the same Parquet value.
func appendEngineKey(dst []byte, t EngineKeyType, v any) ([]byte, error) {
	switch x := v.(type) {
	case int64:
		switch t {
		case EngineKeyInt8, EngineKeyInt16, EngineKeyInt32, EngineKeyDate:
			if x < math.MinInt32 || x > math.MaxInt32 {
				break
			}
			return appendIntKey(dst, x), nil
		case EngineKeyInt64, EngineKeyMillis, EngineKeyMicros:
			return appendIntKey(dst, x), nil
		}
	case float64:
		if t == EngineKeyDouble || t == EngineKeyFloat && float64(float32(x)) == x || t == EngineKeyFloat && math.IsNaN(x) {
			return appendFloatKey(dst, x), nil
		}
	case bool:
		if t == EngineKeyBool {
			return appendBoolKey(dst, x), nil
		}
	case string:
		if t == EngineKeyString {
			return append(append(dst, tagBytes), x...), nil
		}
	case []byte:
		if t == EngineKeyBinary {
			return append(append(dst, tagBytes), x...), nil
		}
	}
	return dst, fmt.Errorf("key value %v (%T) is not a %s key", v, v, t)
}
