package fileindex

import (
	"context"
	"errors"

	"github.com/ariadne-go/ariadne/delta"
)

// mainState is what the update needs to know about the main table: its
// filenames and columns.
type mainState struct {
	exists  bool
	files   map[string]bool
	order   []string // filenames in scan order
	columns map[string]bool
	// sizeSum is the sum of file_size (0 without the column).
	sizeSum int64
}

// readMainState scans the filename and file_size columns of the main table
// (their column chunks only, not the index payload).
func (fi *FileIndex) readMainState(ctx context.Context) (*mainState, error) {
	ms := &mainState{files: map[string]bool{}, columns: map[string]bool{}}
	t, err := delta.Open(ctx, fi.updMainStore())
	if errors.Is(err, delta.ErrNotATable) {
		return ms, nil
	}
	if err != nil {
		return nil, err
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	ms.exists = true
	for _, f := range snap.Schema().Fields {
		ms.columns[f.Name] = true
	}
	cols := []string{FilenameColumn}
	if ms.columns[FileSizeColumn] {
		cols = append(cols, FileSizeColumn)
	}
	for row, err := range snap.Scan(ctx, delta.ScanOptions{Columns: cols}) {
		if err != nil {
			return nil, err
		}
		if len(row) > 1 {
			if n, ok := row[1].(int64); ok {
				ms.sizeSum += n
			}
		}
		if fn, ok := row[0].(string); ok && !ms.files[fn] {
			ms.files[fn] = true
			ms.order = append(ms.order, fn)
		}
	}
	return ms, nil
}

// filesNeedingColumnUpdate is §5.4: when the main table lacks any column
// the definitions expect (a storage column, bloom_<c>, range_<c> or
// auto_bloom_<c>), every indexed file is rebuilt through the batch path;
// otherwise none is. As in the Spark library all columns of all files are
// rebuilt (§9 item 18); unlike it, files that vanished meanwhile are skipped
// and reported rather than failing the update (their rows keep the old
// columns and get nulls in the new ones).
func filesNeedingColumnUpdate(p *buildPlan, ms *mainState) []string {
	if !ms.exists {
		return nil
	}
	for _, c := range p.expectedColumns() {
		if !ms.columns[c] {
			return ms.order
		}
	}
	return nil
}

// unindexedFiles are the tracked files without a main-table row (§5.3 step
// 6, exact string comparison; index.ExpandFiles makes tracked names the
// reader's URIs, §9 item 5).
func unindexedFiles(tracked []string, ms *mainState) []string {
	var out []string
	for _, f := range tracked {
		if !ms.files[f] {
			out = append(out, f)
		}
	}
	return out
}
