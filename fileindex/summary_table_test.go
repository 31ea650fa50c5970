package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// tableEngine is a SummaryTableEngine without Spark: recordEngine's
// records written as a Delta table by our delta package, one commit and
// data file per source file (the files' data files in no particular order,
// as Spark's tasks write them). partial, when set, writes the data files
// and no commit (a write cut before its commit) and fails.
type tableEngine struct {
	recordEngine
	// seen are the jobs asked for.
	seen []*SummaryJob
}

func (e *tableEngine) SummarizeToTable(ctx context.Context, job *SummaryJob, uri string) error {
	e.seen = append(e.seen, job)
	rows, err := e.Summarize(ctx, job)
	if err != nil {
		return err
	}
	defer rows.Close()
	var recs [][]any
	for {
		b, err := rows.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		recs = append(recs, b...)
	}
	st, err := store.Open(ctx, uri)
	if err != nil {
		return err
	}
	defer st.Close()
	// Spark's columns are nullable (a union's NULL branches).
	ts := *rows.Schema()
	ts.Fields = append([]schema.Field(nil), ts.Fields...)
	for i := range ts.Fields {
		ts.Fields[i].Nullable = true
	}
	tb, err := delta.Create(ctx, st, &ts, delta.CreateOptions{})
	if err != nil {
		return err
	}
	// Delta 3 (Spark's writer) leaves an empty _delta_log/_commits/.
	if err := os.MkdirAll(filepath.Join(strings.TrimPrefix(uri, "file://"), "_delta_log", "_commits"), 0o755); err != nil {
		return err
	}
	for len(recs) > 0 {
		n := 1
		for n < len(recs) && recs[n][0] == recs[0][0] {
			n++
		}
		if _, err := tb.Append(ctx, delta.Rows(recs[:n]), delta.WriteOptions{}); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

func (e *tableEngine) TableFiles(job *SummaryJob) func(string) (string, bool) {
	return func(f string) (string, bool) { return f, slices.Contains(job.Files, f) }
}

// cutEngine writes a summary table's data file and no commit, then fails
// (a Spark write killed between its tasks and its commit).
type cutEngine struct{ tableEngine }

func (e *cutEngine) SummarizeToTable(ctx context.Context, job *SummaryJob, uri string) error {
	st, err := store.Open(ctx, uri)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := store.WriteAll(ctx, st, "part-00000-cut.snappy.parquet", []byte("PAR1 half a file"), nil); err != nil {
		return err
	}
	return errors.New("connection lost mid-write")
}

// summaryTablesLeft lists what ix's summary tables folder holds.
func summaryTablesLeft(t *testing.T, root store.Store, dir string) []string {
	t.Helper()
	var left []string
	for o, err := range root.List(context.Background(), store.ListOptions{Prefix: dir + "/" + SummaryTablesFolder + "/"}) {
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, o.Key)
	}
	return left
}

// TestSummaryTables: summaries written by the engine as Delta tables in the
// index's folder build the streamed path's index; each table is deleted
// once read; a write cut before its commit fails the update with nothing
// staged and nothing left; a table a dead attempt left (committed, with
// records of the same files and other values) is deleted by the next
// update and does not reach the index.
func TestSummaryTables(t *testing.T) {
	ctx := context.Background()
	js := `{"type":"struct","fields":[{"name":"k","type":"long","nullable":true,"metadata":{}},{"name":"s","type":"string","nullable":true,"metadata":{}},{"name":"n","type":"double","nullable":true,"metadata":{}}]}`
	dir := t.TempDir()
	var files []string
	for i := range 5 {
		files = append(files, updWriteFile(t, dir, fmt.Sprintf("f%d.csv", i), fmt.Sprintf("k,s,n\n%d,a%d,%d.5\n%d,b,-1\n", i, i, i, i+10)))
	}
	build := func(opts UpdateOptions, eng func(*FileIndex) SummaryEngine, before func(*updEnv, *FileIndex)) (string, *updEnv, *FileIndex, error) {
		e := newUpdEnv(t)
		ix := e.open("tab", js, "csv", map[string]string{"header": "true"})
		updAddFiles(t, ix, files...)
		must(t, ix.AddIndex(ctx, "k"))
		must(t, ix.AddBloomIndex(ctx, "s", 0.01))
		must(t, ix.AddRangeIndex(ctx, "n"))
		fi := e.fi(ix)
		if eng != nil {
			opts.Summaries = eng(fi)
		}
		if before != nil {
			before(e, fi)
		}
		_, err := fi.Update(ctx, opts)
		if err != nil {
			return "", e, fi, err
		}
		return sumState(t, ix, []string{"n"}), e, fi, nil
	}
	want, _, _, err := build(UpdateOptions{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := &tableEngine{}
	got, e, fi, err := build(UpdateOptions{SummaryTables: true, SummaryBatchFiles: 2}, func(fi *FileIndex) SummaryEngine {
		first.res = fi.res
		return first
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("index from summary tables:\n%s\nwant (embedded):\n%s", got, want)
	}
	if left := summaryTablesLeft(t, e.root, fi.ix.Paths().Dir); len(left) > 0 {
		t.Errorf("summary tables left after the update: %v", left)
	}
	if dirs, _ := filepath.Glob(filepath.Join(e.dir, filepath.FromSlash(fi.ix.Paths().Dir), SummaryTablesFolder, "*")); len(dirs) > 0 {
		t.Errorf("summary table folders left after the update: %v", dirs)
	}

	// A write cut before its commit.
	_, e, fi, err = build(UpdateOptions{SummaryTables: true}, func(fi *FileIndex) SummaryEngine {
		return &cutEngine{tableEngine{recordEngine: recordEngine{res: fi.res}}}
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "connection lost mid-write") {
		t.Fatalf("update with the write cut: %v", err)
	}
	for _, key := range []string{fi.ix.Paths().Main, fi.ix.Paths().Staging} {
		if v := updTableVersion(t, e.root, key); v != -1 {
			t.Errorf("a failed update wrote %s (version %d)", key, v)
		}
	}
	if left := summaryTablesLeft(t, e.root, fi.ix.Paths().Dir); len(left) > 0 {
		t.Errorf("a cut write's files left: %v", left)
	}

	// An engine that reports success and committed nothing.
	_, _, _, err = build(UpdateOptions{SummaryTables: true}, func(fi *FileIndex) SummaryEngine {
		return &nothingEngine{tableEngine{recordEngine: recordEngine{res: fi.res}}}
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "no committed version") {
		t.Fatalf("update whose engine committed nothing: %v", err)
	}

	// A dead attempt's table: committed, the same files' records with
	// other values (every k + 100), and a cut write's data file.
	leftover := func(e *updEnv, fi *FileIndex) {
		eng := &tableEngine{recordEngine: recordEngine{res: fi.res, lie: func(st *schema.Struct, recs [][]any) (*schema.Struct, [][]any) {
			for _, r := range recs {
				if r[3] != nil {
					r[3] = r[3].(int64) + 100
				}
			}
			return st, recs
		}}}
		for _, job := range first.seen {
			key, uri, err := fi.summaryTableURI()
			if err != nil {
				t.Fatal(err)
			}
			if err := eng.SummarizeToTable(ctx, job, uri); err != nil {
				t.Fatal(err)
			}
			must(t, store.WriteAll(ctx, e.root, key+"-dead/part-00000.snappy.parquet", []byte("PAR1"), nil))
		}
		if len(summaryTablesLeft(t, e.root, fi.ix.Paths().Dir)) < 2*len(first.seen) {
			t.Fatal("no leftover written")
		}
	}
	got, e, fi, err = build(UpdateOptions{SummaryTables: true}, func(fi *FileIndex) SummaryEngine { return &tableEngine{recordEngine: recordEngine{res: fi.res}} }, leftover)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("index after a dead attempt's table:\n%s\nwant (embedded):\n%s", got, want)
	}
	if left := summaryTablesLeft(t, e.root, fi.ix.Paths().Dir); len(left) > 0 {
		t.Errorf("a dead attempt's table left: %v", left)
	}
}

// nothingEngine reports success without writing.
type nothingEngine struct{ tableEngine }

func (e *nothingEngine) SummarizeToTable(ctx context.Context, job *SummaryJob, uri string) error {
	return nil
}
