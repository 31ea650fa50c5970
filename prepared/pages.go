package prepared

import (
	"fmt"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// keyWriter writes key groups column by column with key-aligned pages: it
// ends a column's page (ColumnWriter.Flush) before a key that would not fit
// in it, and gives a key larger than the target pages of its own, cut at row
// boundaries. Columns are paged independently: a narrow column packs more
// keys per page than a wide one.
//
// A group's rows come one at a time (addRow) and are not held: each
// column's values wait in the writer only until the column's decision is
// known. A column whose share of the key passes the target (or holds more
// than maxHeldValues values) switches to pages of its own at once and
// writes every page as it fills, so a key of millions of rows takes about a
// page per column in memory, not its rows (the skewed lake's top key, 5M
// rows, needed more than half of a 1 GiB budget when groups were held).
type keyWriter struct {
	pw     *parquet.Writer
	target int // Options.PageBytes
	fs     *FileStats

	open    []bool  // per column: the current page holds values
	pending []int64 // per column: estimated value bytes of the current page

	// The current group, per column: the values not written yet.
	rows    int   // rows of the group
	seen    []int // per column: rows of the group it got values for
	vals    [][]parquet.Value
	rowEnd  [][]int   // per column: end of each buffered row's values in vals
	rowSize [][]int64 // per column: estimated bytes of each buffered row's values
	total   []int64   // per column: estimated bytes of the group's values so far
	acc     []int64   // per column with pages of its own: bytes buffered
	own     []bool    // per column: the group has pages of its own
	spans   []int     // per column with pages of its own: pages written
	err     error
}

// maxHeldValues caps the values of one column a group may buffer before
// the column gets pages of its own: values that cost no page bytes (nulls)
// would otherwise be held without bound for a huge key.
const maxHeldValues = 1 << 20

func newKeyWriter(pw *parquet.Writer, cols *columns, target int, fs *FileStats) *keyWriter {
	n := cols.leaves
	return &keyWriter{
		pw: pw, target: target, fs: fs,
		open: make([]bool, n), pending: make([]int64, n), seen: make([]int, n),
		vals: make([][]parquet.Value, n), rowEnd: make([][]int, n), rowSize: make([][]int64, n),
		total: make([]int64, n), acc: make([]int64, n), own: make([]bool, n), spans: make([]int, n),
	}
}

// valueSize estimates a value's bytes in an uncompressed PLAIN page.
func valueSize(v parquet.Value) int64 {
	if v.IsNull() {
		return 0
	}
	switch v.Kind() {
	case parquet.Boolean:
		return 1
	case parquet.Int32, parquet.Float:
		return 4
	case parquet.Int64, parquet.Double:
		return 8
	case parquet.Int96:
		return 12
	case parquet.ByteArray:
		return 4 + int64(len(v.ByteArray()))
	case parquet.FixedLenByteArray:
		return int64(len(v.ByteArray()))
	}
	return 0
}

// beginGroup starts a key group.
func (w *keyWriter) beginGroup() {
	w.rows, w.err = 0, nil
	for c := range w.vals {
		w.drop(c)
		w.seen[c], w.total[c], w.acc[c], w.own[c], w.spans[c] = 0, 0, 0, false, 0
	}
}

// drop forgets column c's buffered values (written or not needed).
func (w *keyWriter) drop(c int) {
	clear(w.vals[c]) // the values point into rows: let them go
	w.vals[c], w.rowEnd[c], w.rowSize[c] = w.vals[c][:0], w.rowEnd[c][:0], w.rowSize[c][:0]
}

// addRow adds a row of the current key; the writer keeps its values, not
// the row.
func (w *keyWriter) addRow(r parquet.Row) error {
	w.rows++
	cws := w.pw.ColumnWriters()
	r.Range(func(c int, vs []parquet.Value) bool {
		var size int64
		for _, v := range vs {
			size += valueSize(v)
		}
		w.seen[c]++
		w.total[c] += size
		if w.own[c] {
			w.err = w.addOwn(cws[c], c, vs, size)
			return w.err == nil
		}
		w.buffer(c, vs, size)
		if w.target > 0 && (w.total[c] > int64(w.target) || len(w.vals[c]) > maxHeldValues) {
			w.err = w.startOwn(cws[c], c)
		}
		return w.err == nil
	})
	return w.err
}

func (w *keyWriter) buffer(c int, vs []parquet.Value, size int64) {
	w.vals[c] = append(w.vals[c], vs...)
	w.rowEnd[c] = append(w.rowEnd[c], len(w.vals[c]))
	w.rowSize[c] = append(w.rowSize[c], size)
}

// startOwn gives column c's share of the key pages of its own: the open
// page is ended and the buffered rows are written, cut at row boundaries
// into pages of at most the target (a row larger than it alone).
func (w *keyWriter) startOwn(cw *parquet.ColumnWriter, c int) error {
	if w.open[c] {
		if err := w.flush(cw, c); err != nil {
			return err
		}
	}
	w.own[c] = true
	vals, ends, sizes := slices.Clone(w.vals[c]), slices.Clone(w.rowEnd[c]), slices.Clone(w.rowSize[c])
	w.drop(c)
	lo := 0
	for i, end := range ends {
		if err := w.addOwn(cw, c, vals[lo:end], sizes[i]); err != nil {
			return err
		}
		lo = end
	}
	return nil
}

// addOwn adds a row's values to a column with pages of its own: the
// buffered rows are written as a page first if the row would pass the
// target.
func (w *keyWriter) addOwn(cw *parquet.ColumnWriter, c int, vs []parquet.Value, size int64) error {
	if w.acc[c] > 0 && w.acc[c]+size > int64(w.target) {
		if err := w.writeAndFlush(cw, c, 0, len(w.rowEnd[c])); err != nil {
			return err
		}
		w.spans[c]++
		w.drop(c)
		w.acc[c] = 0
	}
	w.buffer(c, vs, size)
	w.acc[c] += size
	return nil
}

// endGroup writes what the key's columns still buffer.
func (w *keyWriter) endGroup() error {
	if w.err != nil {
		return w.err
	}
	target := int64(w.target)
	for c, cw := range w.pw.ColumnWriters() {
		if w.seen[c] != w.rows {
			return fmt.Errorf("prepared: column %d has values for %d of %d rows", c, w.seen[c], w.rows)
		}
		n := len(w.rowEnd[c])
		switch {
		case target <= 0: // one page per key (PageBytesPerKey)
			if err := w.writeAndFlush(cw, c, 0, n); err != nil {
				return err
			}
			w.fs.MaxPagesPerKey = max(w.fs.MaxPagesPerKey, 1)
		case w.own[c]: // a key larger than a page: the last of its pages
			if n > 0 {
				if err := w.writeAndFlush(cw, c, 0, n); err != nil {
					return err
				}
				w.spans[c]++
			}
			w.fs.MaxPagesPerKey = max(w.fs.MaxPagesPerKey, w.spans[c])
		default: // the whole key in the current page or the next
			if w.open[c] && w.pending[c]+w.total[c] > target {
				if err := w.flush(cw, c); err != nil {
					return err
				}
			}
			if err := w.write(cw, c, 0, n); err != nil {
				return err
			}
			w.open[c] = true
			w.pending[c] += w.total[c]
			w.fs.MaxPagesPerKey = max(w.fs.MaxPagesPerKey, 1)
		}
		w.drop(c)
	}
	return nil
}

// write writes rows [from, to) of the current group to column c.
func (w *keyWriter) write(cw *parquet.ColumnWriter, c, from, to int) error {
	lo := 0
	if from > 0 {
		lo = w.rowEnd[c][from-1]
	}
	n, err := cw.WriteRowValues(w.vals[c][lo:w.rowEnd[c][to-1]])
	if err != nil {
		return err
	}
	if n != to-from {
		return fmt.Errorf("prepared: column %d took %d rows of %d", c, n, to-from)
	}
	return nil
}

func (w *keyWriter) writeAndFlush(cw *parquet.ColumnWriter, c, from, to int) error {
	if err := w.write(cw, c, from, to); err != nil {
		return err
	}
	return w.flush(cw, c)
}

// flush ends column c's current page.
func (w *keyWriter) flush(cw *parquet.ColumnWriter, c int) error {
	if err := cw.Flush(); err != nil {
		return err
	}
	w.fs.PagesPerColumn[c]++
	w.open[c], w.pending[c] = false, 0
	return nil
}

// countPending counts the open pages that the row group's end will write.
func (w *keyWriter) countPending() {
	for c, open := range w.open {
		if open {
			w.fs.PagesPerColumn[c]++
		}
		w.open[c], w.pending[c] = false, 0
	}
}

// endRowGroup ends the row group (and every open page).
func (w *keyWriter) endRowGroup() error {
	w.countPending()
	w.fs.RowGroups++
	return w.pw.Flush()
}
