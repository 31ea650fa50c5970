package prepared

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/ariadne-go/ariadne/internal/proc"
)

// rowStream yields rows in (key, sort columns) order; io.EOF ends it.
type rowStream interface {
	next() (parquet.Row, error)
	close() error
}

// sliceStream streams sorted rows held in memory.
type sliceStream struct {
	rows []parquet.Row
	i    int
}

func (s *sliceStream) next() (parquet.Row, error) {
	if s.i == len(s.rows) {
		return nil, io.EOF
	}
	s.i++
	return s.rows[s.i-1], nil
}

func (s *sliceStream) close() error { s.rows = nil; return nil }

// sortOverhead is the per-row memory that sorting adds to a held row: the
// compared values, the permutation and the sorted copy's slice header.
func sortOverhead(c *columns) int64 { return valueBytes*int64(len(c.order)) + 4 + 24 }

// sorter sorts the rows of one partition into buckets under a memory
// budget (an external merge sort). Rows are held until the budget is used,
// then every bucket's rows are sorted and spilled as a run (a Parquet file
// in the temporary folder); at the end each bucket is the merge of its
// runs and its rows still held. Merging breaks ties by run order and every
// sort is stable, so the output is exactly the stable in-memory sort of the
// rows in arrival order, whatever the budget.
type sorter struct {
	cols    *columns
	parent  string // Options.TempDir
	tmp     string // folder of the runs, made at the first spill
	budget  int64
	held    int64 // bytes of the rows held
	buckets [][]parquet.Row
	runs    [][]string // per bucket, its runs in order
	stats   *sortStats
	o       Options
}

// sortStats counts the spilled runs.
type sortStats struct {
	Runs       int
	SpillBytes int64
}

// newSorter sorts into nb buckets; the rows held take at most half of the
// budget: the other half is the garbage collector's headroom and the
// readers' and writer's buffers.
func newSorter(cols *columns, nb int, o Options, st *sortStats) *sorter {
	return &sorter{cols: cols, parent: o.TempDir, budget: o.MemoryBytes / 2, buckets: make([][]parquet.Row, nb),
		runs: make([][]string, nb), stats: st, o: o}
}

// add holds a row (owned by the sorter from now on) in bucket k.
func (s *sorter) add(ctx context.Context, k int, r parquet.Row) error {
	s.buckets[k] = append(s.buckets[k], r)
	s.held += rowBytes(r) + sortOverhead(s.cols)
	if s.held > s.budget {
		return s.spill(ctx)
	}
	return nil
}

// minPieceRows is the fewest rows a bucket's held rows are split into when
// they are spilled as several runs (see spill): smaller runs would cost
// more in merge fan-in than their parallel sort saves.
const minPieceRows = 4 << 10

// spill writes every bucket's held rows as sorted runs. The buckets are
// sorted and written in parallel (up to Options.Parallelism at once); when
// there are fewer non-empty buckets than workers, a bucket's rows are cut
// into contiguous pieces, each its own run. The merge breaks ties by run
// order and pieces keep arrival order, so the output is the same as with
// one run per bucket. Sorting a piece allocates what sortOverhead already
// counts for its rows, so the pieces sorted at once stay within the budget.
func (s *sorter) spill(ctx context.Context) error {
	if err := s.mkdir(); err != nil {
		return err
	}
	type piece struct {
		k    int
		rows []parquet.Row
		name string
		size int64
	}
	nonEmpty := 0
	for _, rows := range s.buckets {
		if len(rows) > 0 {
			nonEmpty++
		}
	}
	split := 1
	if workers := max(s.o.Parallelism, 1); nonEmpty > 0 && nonEmpty < workers {
		split = (workers + nonEmpty - 1) / nonEmpty
	}
	var pieces []*piece
	for k, rows := range s.buckets {
		per := max((len(rows)+split-1)/split, minPieceRows)
		seq := len(s.runs[k])
		for i := 0; i < len(rows); i += per {
			name := filepath.Join(s.tmp, fmt.Sprintf("b%05d-r%05d.parquet", k, seq))
			pieces = append(pieces, &piece{k: k, rows: rows[i:min(i+per, len(rows))], name: name})
			seq++
		}
	}
	err := parallel(ctx, len(pieces), s.o.Parallelism, func(ctx context.Context, i int) error {
		p := pieces[i]
		sortRows(s.cols, p.rows)
		n, err := writeRun(ctx, p.name, s.cols.schema, p.rows)
		p.size = n
		return err
	}, func(_, i int) {
		s.stats.Runs++
		s.stats.SpillBytes += pieces[i].size
		report(s.o, Progress{Phase: "spill", Done: s.stats.Runs, Bytes: s.stats.SpillBytes})
	})
	if err != nil {
		return err
	}
	for _, p := range pieces {
		s.runs[p.k] = append(s.runs[p.k], p.name)
	}
	for k, rows := range s.buckets {
		clear(rows)
		s.buckets[k] = rows[:0]
	}
	s.held = 0
	return nil
}

// mkdir makes the folder of the runs, at the first spill.
func (s *sorter) mkdir() error {
	if s.tmp != "" {
		return nil
	}
	// Named after this process, so that a killed run's folder is removed
	// by the next update (proc.SpillPattern).
	dir, err := os.MkdirTemp(s.parent, proc.SpillPattern("prepare"))
	if err != nil {
		return fmt.Errorf("prepared: temporary folder for sorted runs: %w", err)
	}
	s.tmp = dir
	return nil
}

// spilled reports whether any run was spilled.
func (s *sorter) spilled() bool {
	for _, r := range s.runs {
		if len(r) > 0 {
			return true
		}
	}
	return false
}

// finish is called when every row was added and before the buckets are
// written. When runs were spilled (the rows outgrew half the budget), the
// rows still held are spilled too, so that the writers, which then run
// beside the merges, have the memory those rows took; and the writers are
// given page buffers on disk, in the runs' folder: parquet-go holds a row
// group's compressed pages until the row group ends, and a row group never
// ends inside a key, so one heavy key (the skewed lake's top user: 5M rows)
// would otherwise hold its whole compressed data. Without runs it returns
// nil: everything fitted in memory, and so does the output.
func (s *sorter) finish(ctx context.Context) (parquet.BufferPool, error) {
	if !s.spilled() {
		return nil, nil
	}
	if s.held > 0 {
		if err := s.spill(ctx); err != nil {
			return nil, err
		}
	}
	if err := s.mergePasses(ctx); err != nil {
		return nil, err
	}
	return parquet.NewFileBufferPool(s.tmp, "pages-*"), nil
}

// maxMergeRuns is the most runs merged at once: each open run holds a
// reader with a page buffer per column (≈64 KiB each), so 64 runs of the
// benchmark lake's 5 columns take ≈20–60 MiB per merge, and there are up
// to Options.Parallelism merges at once.
const maxMergeRuns = 64

// mergePasses merges a bucket's runs, consecutive ones maxMergeRuns at a
// time, into longer runs until at most maxMergeRuns are left, so that
// the final merge into the writer opens no more (a 100 GB input under
// 1 GiB spills thousands of runs). Runs merged are consecutive and the
// merge keeps run order among equal rows, so the order stays that of the
// stable sort. Groups are merged in parallel.
func (s *sorter) mergePasses(ctx context.Context) error {
	fanIn := cmp.Or(s.o.mergeFanIn, maxMergeRuns)
	for pass := 0; ; pass++ {
		type group struct {
			k    int
			runs []string
			name string
			size int64
		}
		var groups []*group
		next := make([][]string, len(s.runs))
		for k, runs := range s.runs {
			if len(runs) <= fanIn {
				next[k] = runs
				continue
			}
			for i := 0; i < len(runs); i += fanIn {
				g := &group{k: k, runs: runs[i:min(i+fanIn, len(runs))]}
				if len(g.runs) == 1 {
					next[k] = append(next[k], g.runs[0])
					continue
				}
				g.name = filepath.Join(s.tmp, fmt.Sprintf("b%05d-m%02d-r%05d.parquet", k, pass, len(next[k])))
				next[k] = append(next[k], g.name)
				groups = append(groups, g)
			}
		}
		if len(groups) == 0 {
			return nil
		}
		err := parallel(ctx, len(groups), s.o.Parallelism, func(ctx context.Context, i int) error {
			g := groups[i]
			m, err := s.merge(g.runs, nil)
			if err != nil {
				return err
			}
			g.size, err = writeRunStream(ctx, g.name, s.cols.schema, m)
			if cerr := m.close(); err == nil {
				err = cerr
			}
			for _, r := range g.runs {
				if rerr := os.Remove(r); err == nil {
					err = rerr
				}
			}
			return err
		}, func(_, i int) {
			s.stats.Runs++
			s.stats.SpillBytes += groups[i].size
			report(s.o, Progress{Phase: "spill", Done: s.stats.Runs, Bytes: s.stats.SpillBytes})
		})
		if err != nil {
			return err
		}
		s.runs = next
	}
}

// merge opens runs (and then the held rows, if any) as one merged stream.
func (s *sorter) merge(runs []string, held []parquet.Row) (*mergeStream, error) {
	m := &mergeStream{cols: s.cols}
	for i, name := range runs {
		rs, err := openRun(name)
		if err != nil {
			m.close()
			return nil, err
		}
		if err := m.push(rs, i); err != nil {
			m.close()
			return nil, err
		}
	}
	if len(held) > 0 {
		if err := m.push(&sliceStream{rows: held}, len(runs)); err != nil {
			m.close()
			return nil, err
		}
	}
	heap.Init(m)
	return m, nil
}

// runGroupRows bounds the row groups of a run file: parquet-go holds a row
// group's pages in memory until it ends.
const runGroupRows = 16 << 10

// runSchema is a run file's schema: fast to write and read back (PLAIN,
// SNAPPY pages), same leaves. Not LZ4_RAW: parquet-go v0.32.0 read back
// other values than it wrote with it (TestRunRoundTrip).
func runSchema(s *parquet.Schema) *parquet.Schema {
	return relayout(s, &parquet.Snappy, func([]string, parquet.Node) encoding.Encoding { return &parquet.Plain })
}

// writeRun writes sorted rows as a Parquet file and returns its size.
func writeRun(ctx context.Context, name string, schema *parquet.Schema, rows []parquet.Row) (int64, error) {
	return writeRunStream(ctx, name, schema, &sliceStream{rows: rows})
}

// writeRunStream writes a stream of sorted rows as a run file and returns
// its size.
func writeRunStream(ctx context.Context, name string, schema *parquet.Schema, rows rowStream) (int64, error) {
	f, err := os.Create(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	pw := parquet.NewWriter(f, runSchema(schema), parquet.PageBufferSize(64<<10))
	batch := make([]parquet.Row, 0, runGroupRows)
	flush := func() error {
		if _, err := pw.WriteRows(batch); err != nil {
			return err
		}
		clear(batch)
		batch = batch[:0]
		return pw.Flush()
	}
	for {
		r, err := rows.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		if batch = append(batch, r); len(batch) == runGroupRows {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
			if err := flush(); err != nil {
				return 0, err
			}
		}
	}
	if len(batch) > 0 {
		if err := flush(); err != nil {
			return 0, err
		}
	}
	if err := pw.Close(); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), f.Close()
}

// stream returns bucket k's rows in order and lets the sorter forget them.
func (s *sorter) stream(k int) (rowStream, error) {
	rows := s.buckets[k]
	s.buckets[k] = nil
	sortRows(s.cols, rows)
	if len(s.runs[k]) == 0 {
		return &sliceStream{rows: rows}, nil
	}
	m, err := s.merge(s.runs[k], rows)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// cleanup removes the runs (after the streams are closed).
func (s *sorter) cleanup() error {
	if s.tmp == "" {
		return nil
	}
	err := os.RemoveAll(s.tmp)
	s.tmp = ""
	return err
}

// empty reports whether bucket k got no rows.
func (s *sorter) empty(k int) bool { return len(s.buckets[k]) == 0 && len(s.runs[k]) == 0 }

// runStream reads a run file back.
type runStream struct {
	f   *os.File
	rr  *parquet.Reader
	buf []parquet.Row
	n   int // rows in buf
	i   int
	eof bool
}

func openRun(name string) (*runStream, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pf, err := pqrow.OpenParquet(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("prepared: run %s: %w", name, err)
	}
	return &runStream{f: f, rr: parquet.NewReader(pf), buf: make([]parquet.Row, 128)}, nil
}

func (r *runStream) next() (parquet.Row, error) {
	for r.i == r.n {
		if r.eof {
			return nil, io.EOF
		}
		n, err := r.rr.ReadRows(r.buf)
		r.n, r.i = n, 0
		if errors.Is(err, io.EOF) {
			r.eof = true
		} else if err != nil {
			return nil, err
		} else if n == 0 {
			return nil, fmt.Errorf("prepared: run reader returned no rows and no error")
		}
	}
	r.i++
	return r.buf[r.i-1].Clone(), nil
}

func (r *runStream) close() error {
	r.rr.Close()
	return r.f.Close()
}

// mergeStream merges sorted streams; equal rows come in stream order.
type mergeStream struct {
	cols  *columns
	heads []mergeHead
	all   []rowStream
}

type mergeHead struct {
	row parquet.Row
	src rowStream
	ord int
}

func (m *mergeStream) push(s rowStream, ord int) error {
	m.all = append(m.all, s)
	r, err := s.next()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return err
	}
	m.heads = append(m.heads, mergeHead{row: r, src: s, ord: ord})
	return nil
}

func (m *mergeStream) Len() int { return len(m.heads) }
func (m *mergeStream) Less(i, j int) bool {
	if d := compareRows(m.cols, m.heads[i].row, m.heads[j].row); d != 0 {
		return d < 0
	}
	return m.heads[i].ord < m.heads[j].ord
}
func (m *mergeStream) Swap(i, j int) { m.heads[i], m.heads[j] = m.heads[j], m.heads[i] }
func (m *mergeStream) Push(x any)    { m.heads = append(m.heads, x.(mergeHead)) }
func (m *mergeStream) Pop() any {
	h := m.heads[len(m.heads)-1]
	m.heads = m.heads[:len(m.heads)-1]
	return h
}

func (m *mergeStream) next() (parquet.Row, error) {
	if len(m.heads) == 0 {
		return nil, io.EOF
	}
	top := &m.heads[0]
	out := top.row
	r, err := top.src.next()
	switch {
	case errors.Is(err, io.EOF):
		heap.Pop(m)
	case err != nil:
		return nil, err
	default:
		top.row = r
		heap.Fix(m, 0)
	}
	return out, nil
}

func (m *mergeStream) close() error {
	var errs []error
	for _, s := range m.all {
		errs = append(errs, s.close())
	}
	m.all, m.heads = nil, nil
	return errors.Join(errs...)
}

// compareRows orders two rows by (key, sort columns).
func compareRows(c *columns, a, b parquet.Row) int {
	for _, col := range c.order {
		if d := compareValues(col.typ, valueOf(a, col.index), valueOf(b, col.index)); d != 0 {
			return d
		}
	}
	return 0
}
