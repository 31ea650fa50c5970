package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ariadne-go/ariadne/schema"
)

// Summaries computed by another engine (Apache Spark, package
// sparkengine): the engine reads a batch of new files and returns, per
// file, the records the Go summariser would have collected — distinct
// values, temporal (value, newest timestamp) pairs, min/max, the row
// count. They are fed into the same per-file summary state (fileState) and
// finished by the same code (counts, bloom filters from the distinct
// values, the encoded cells in the summary spill), so from there on an
// update is the ordinary one: batching, large-index rows, staging and
// consolidation under our lock and commit protocol. The engine only reads
// data files; it never writes the index.

// SummaryKind says what a SummaryPart collects per file.
type SummaryKind int

const (
	// SummaryValues: the distinct non-null values of Column (a column path
	// of the stored schema, or a computed column's name). Distinct under
	// the index's equality, where -0.0 equals 0.0 and NaN equals NaN: a
	// class is represented by its first value in the file (row order, then
	// element order) — see Raw.
	SummaryValues SummaryKind = iota + 1
	// SummaryExploded: the distinct non-null values of field Field of the
	// elements of array column ArrayColumn (null and empty arrays yield
	// nothing).
	SummaryExploded
	// SummaryTemporal: the distinct values of Column, null included, each
	// with the greatest non-null value of Timestamp over its rows (null if
	// none).
	SummaryTemporal
)

// SummaryPart is one per-file collection of a SummaryJob.
type SummaryPart struct {
	Kind SummaryKind
	// Raw (a bloom column's part) asks for the values distinct by their
	// rendering instead: -0.0 and 0.0 both, as a bloom filter takes every
	// rendering of a value.
	Raw                 bool
	Column              string
	ArrayColumn, Field  string
	Timestamp           string
	Type, TimestampType schema.Type // the value's (and timestamp's) type in the index
}

// SummaryJob is one batch of files to summarise. The engine reads Files
// with the stored Schema, Format and read Options, applies the Computed
// columns as a join does, and returns records (JoinRows) with the columns,
// in this order:
//
//	file   string  the file (one of Files, as given)
//	part   int     -1 for the file's own record, else the index in Parts
//	rows   long    the file's row count (file record only)
//	then per part p: value_p (and, for SummaryTemporal, ts_p)
//	then per range column r: min_r, max_r (file record only)
//
// A file record carries the row count and the ranges; a part record one
// value (or pair) of that part. Records are ordered by file (any order
// within a file); a file without rows may have no record at all. Values
// have the index's types (Part.Type); the ranges are min and max over the
// non-null values (null if none).
type SummaryJob struct {
	Format   string
	Schema   *schema.Struct
	Options  map[string]string
	Files    []string
	Computed []Computed
	Parts    []SummaryPart
	// Ranges are the range indexes' column paths and types.
	Ranges     []string
	RangeTypes []schema.Type
}

// SummaryEngine computes an update's per-file summaries (UpdateOptions.
// Summaries): package sparkengine's Engine on Apache Spark. The update's
// locks, batching, staging and commits stay ours.
type SummaryEngine interface {
	// Name names the engine in errors ("spark").
	Name() string
	// Summarize runs job and returns its records; the caller closes them.
	Summarize(ctx context.Context, job *SummaryJob) (JoinRows, error)
}

// SummaryTableEngine is a SummaryEngine that can also write a job's
// records itself, as a Delta table, instead of streaming them back
// (UpdateOptions.SummaryTables): package sparkengine's Engine, with Spark's
// Delta writer.
type SummaryTableEngine interface {
	SummaryEngine
	// SummarizeToTable writes job's records (the SummaryJob layout) as a
	// new Delta table at uri (an object URI under the index's folder, which
	// holds nothing) and returns once its first version is committed.
	// Records may come in any order across the table's data files, but all
	// records of one file must be contiguous in one data file. A failure may
	// leave data files at uri; only a committed version is ever read.
	SummarizeToTable(ctx context.Context, job *SummaryJob, uri string) error
	// TableFiles returns the mapping from the file a table's record names
	// (in the engine's own form: Spark writes file:/x for file:///x) to
	// the file of job; ok is false for a file not in job.
	TableFiles(job *SummaryJob) func(recorded string) (file string, ok bool)
}

// SummaryTablesFolder is the folder, under an index's folder, of the Delta
// tables a SummaryTableEngine writes: one per request, named by a random
// UUID, read back by the update that asked for it and deleted right after.
// The update lock owns the folder: a Spark update deletes what a dead
// attempt left there before its first request, and nothing else reads it.
const SummaryTablesFolder = "_ariadne_spark_summaries"

// DefaultSummaryBatchFiles is the number of files one request to a summary
// engine covers when UpdateOptions.SummaryBatchFiles is 0. A request's
// records (every file's distinct values) are ordered by file on Spark and
// pass through its driver: 16 files of ~100,000 distinct values per column
// stay well within a small driver (a local Spark with a 1 GiB driver
// stopped on 32 files of the benchmark lake in one request).
const DefaultSummaryBatchFiles = 16

// remoteSummaryPlan is the summary plan of an update whose summaries an
// engine computes: every storage, bloom and range column needs a value
// type the summary state holds (no nested index values); the values come
// from the engine's records, so no getters.
func remoteSummaryPlan(p *buildPlan) (*summaryPlan, error) {
	sp := &summaryPlan{}
	unsupported := func(name string, t schema.Type) error {
		return fmt.Errorf("fileindex: column %s of type %s: summaries of nested values are not computed by another engine (update without it)", name, schema.TypeName(t))
	}
	for _, c := range p.storage {
		ops, ok := opsFor(c.typ)
		if !ok {
			return nil, unsupported(c.name, c.typ)
		}
		s := storageSum{col: c, ops: ops}
		if c.kind == kindTemporal {
			if s.tsOps, ok = opsFor(c.tsType); !ok {
				return nil, unsupported(c.tsPath, c.tsType)
			}
		}
		sp.storage = append(sp.storage, s)
	}
	for _, b := range p.blooms {
		ops, ok := opsFor(b.typ)
		if !ok {
			return nil, unsupported(b.name, b.typ)
		}
		sp.blooms = append(sp.blooms, bloomSum{col: b, ops: ops})
	}
	for _, r := range p.ranges {
		ops, ok := opsFor(r.typ)
		if !ok {
			return nil, unsupported(r.name, r.typ)
		}
		sp.ranges = append(sp.ranges, rangeSum{col: r, ops: ops})
	}
	return sp, nil
}

// summaryJob returns the job for files: the parts are the storage columns
// then the bloom columns, in plan order.
func (s *session) summaryJob(files []string) *SummaryJob {
	p := s.plan
	job := &SummaryJob{Format: p.format, Schema: p.src, Options: p.readOpts, Files: files}
	for _, c := range p.computed {
		job.Computed = append(job.Computed, Computed{Name: c.Name, Expr: c.Expr})
	}
	for _, c := range s.sum.storage {
		part := SummaryPart{Kind: SummaryValues, Column: c.col.name, Type: c.col.typ}
		switch c.col.kind {
		case kindExploded:
			part = SummaryPart{Kind: SummaryExploded, ArrayColumn: c.col.arrayPath, Field: c.col.fieldPath, Type: c.col.typ}
		case kindTemporal:
			part = SummaryPart{Kind: SummaryTemporal, Column: c.col.name, Timestamp: c.col.tsPath, Type: c.col.typ, TimestampType: c.col.tsType}
		}
		job.Parts = append(job.Parts, part)
	}
	for _, b := range s.sum.blooms {
		job.Parts = append(job.Parts, SummaryPart{Kind: SummaryValues, Column: b.col.name, Type: b.col.typ, Raw: true})
	}
	for _, r := range s.sum.ranges {
		job.Ranges = append(job.Ranges, r.col.name)
		job.RangeTypes = append(job.RangeTypes, r.col.typ)
	}
	return job
}

// summarizeOn has eng summarise files, batch by batch, and spills every
// file's summary as the Go summariser does (summary_pipeline.go). Nothing
// is written to the index: a failure of the engine leaves it as it was.
func (s *session) summarizeOn(ctx context.Context, eng SummaryEngine, tables bool, batchFiles int, files []*fileAnalysis, progress func(phase string, done int, bytes int64)) error {
	if len(files) == 0 {
		return nil
	}
	var teng SummaryTableEngine
	if tables {
		var ok bool
		if teng, ok = eng.(SummaryTableEngine); !ok {
			return fmt.Errorf("fileindex: the %s engine does not write summary tables", eng.Name())
		}
	}
	if !s.sum.reads() {
		for _, a := range files {
			a.sum = &fileSummary{}
		}
		return nil
	}
	if s.spill == nil {
		var err error
		if s.spill, err = newSpillFile(s.tmp); err != nil {
			return err
		}
	}
	if batchFiles <= 0 {
		batchFiles = DefaultSummaryBatchFiles
	}
	done, bytes := 0, int64(0)
	for start := 0; start < len(files); start += batchFiles {
		batch := files[start:min(start+batchFiles, len(files))]
		if err := s.summarizeBatchOn(ctx, eng, teng, batch); err != nil {
			return err
		}
		for _, a := range batch {
			bytes += a.Size
		}
		done += len(batch)
		progress("summarize", done, bytes)
	}
	return nil
}

// summarizeBatchOn summarises one batch of files on eng: its records
// streamed back, or, with teng set, written by teng as a Delta table under
// the index's folder and read back from its committed version.
func (s *session) summarizeBatchOn(ctx context.Context, eng SummaryEngine, teng SummaryTableEngine, batch []*fileAnalysis) error {
	byURI := make(map[string]*fileAnalysis, len(batch))
	uris := make([]string, len(batch))
	for i, a := range batch {
		byURI[a.URI] = a
		uris[i] = a.URI
	}
	job := s.summaryJob(uris)
	var rows JoinRows
	var err error
	if teng != nil {
		var drop func()
		rows, drop, err = s.fi.summaryTable(ctx, teng, job)
		defer drop()
	} else {
		rows, err = eng.Summarize(ctx, job)
	}
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := checkSummarySchema(job, rows.Schema()); err != nil {
		return err
	}
	nParts := len(job.Parts)
	// Column positions of each part's value (and timestamp) and of the
	// ranges in a record.
	vcol := make([]int, nParts)
	tcol := make([]int, nParts)
	col := 3
	for i, p := range job.Parts {
		vcol[i] = col
		col++
		if p.Kind == SummaryTemporal {
			tcol[i] = col
			col++
		}
	}
	rcol := col
	var cur *fileAnalysis
	var st *fileState
	finish := func() error {
		if cur == nil {
			return nil
		}
		err := s.finishRemote(cur, st)
		cur, st = nil, nil
		return err
	}
	for {
		recs, err := rows.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		for _, r := range recs {
			f, _ := r[0].(string)
			if cur == nil || f != cur.URI {
				if err := finish(); err != nil {
					return err
				}
				a := byURI[f]
				if a == nil || a.sum != nil {
					return fmt.Errorf("fileindex: %s engine: a summary record for %q, not a file of the batch or not in file order", eng.Name(), f)
				}
				cur, st = a, s.sum.newState(nil)
			}
			part := int(asInt64(r[1]))
			if part < 0 {
				st.rows = asInt64(r[2])
				for i, rs := range s.sum.ranges {
					if st.mins[i], err = rs.ops.canon(r[rcol+2*i]); err != nil {
						return err
					}
					if st.maxs[i], err = rs.ops.canon(r[rcol+2*i+1]); err != nil {
						return err
					}
				}
				continue
			}
			if part >= nParts {
				return fmt.Errorf("fileindex: %s engine: a summary record of part %d (the job has %d)", eng.Name(), part, nParts)
			}
			if err := st.addRemote(part, r[vcol[part]], r[tcol[part]]); err != nil {
				return fmt.Errorf("fileindex: summarise %s: %w", f, err)
			}
		}
	}
	if err := finish(); err != nil {
		return err
	}
	// Files without rows have no record: their summary is empty.
	for _, a := range batch {
		if a.sum == nil {
			if err := s.finishRemote(a, s.sum.newState(nil)); err != nil {
				return err
			}
		}
	}
	return nil
}

// addRemote records one value (with its timestamp for a temporal part) of
// part i: the storage columns' parts, then the bloom columns'.
func (st *fileState) addRemote(i int, v, ts any) error {
	sp := st.sp
	if i >= len(sp.storage) {
		b := &sp.blooms[i-len(sp.storage)]
		v, err := b.ops.canon(v)
		if err != nil || v == nil {
			return err
		}
		_, n := st.blooms[i-len(sp.storage)].add(v)
		st.bytes += n
		return nil
	}
	c := &sp.storage[i]
	set := st.sets[i]
	v, err := c.ops.canon(v)
	if err != nil {
		return err
	}
	if c.col.kind != kindTemporal {
		if v != nil {
			_, n := set.add(v)
			st.bytes += n
		}
		return nil
	}
	if ts, err = c.tsOps.canon(ts); err != nil {
		return err
	}
	j, n := set.add(v)
	st.bytes += n
	if ts != nil && (set.maxTS[j] == nil || c.tsOps.cmp(ts, set.maxTS[j]) > 0) {
		set.maxTS[j] = ts
	}
	return nil
}

// finishRemote finishes a's summary and spills its cells.
func (s *session) finishRemote(a *fileAnalysis, st *fileState) error {
	sum, buf, err := st.finish(a, nil)
	if err != nil {
		return err
	}
	base, err := s.spill.write(buf)
	if err != nil {
		return err
	}
	for i := range sum.storage {
		sum.storage[i].off += base
	}
	for i := range sum.blooms {
		sum.blooms[i].off += base
	}
	a.sum = sum
	return nil
}

// checkSummarySchema checks that the engine typed every value as the index
// stores it: a value of another type would be stored as something else.
// Decimals may differ in precision (their values are rescaled to the
// index's scale).
func checkSummarySchema(job *SummaryJob, st *schema.Struct) error {
	var want []schema.Type
	var names []string
	for _, p := range job.Parts {
		name := p.Column
		if p.Kind == SummaryExploded {
			name = p.ArrayColumn + "." + p.Field
		}
		want, names = append(want, p.Type), append(names, name)
		if p.Kind == SummaryTemporal {
			want, names = append(want, p.TimestampType), append(names, p.Timestamp)
		}
	}
	for i, r := range job.Ranges {
		want, names = append(want, job.RangeTypes[i], job.RangeTypes[i]), append(names, r, r)
	}
	if len(st.Fields) != 3+len(want) {
		return fmt.Errorf("fileindex: summaries: the engine returned %d columns, want %d", len(st.Fields), 3+len(want))
	}
	for i, w := range want {
		got := st.Fields[3+i].Type
		if wd, ok := w.(*schema.Decimal); ok {
			if gd, ok := got.(*schema.Decimal); ok && gd.Scale <= wd.Scale {
				continue
			}
		}
		if !schema.Equal(got, w) {
			return fmt.Errorf("fileindex: summaries: column %s is %s in the engine, %s in the index", names[i], got, w)
		}
	}
	return nil
}
