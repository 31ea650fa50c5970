package prepared

import (
	"fmt"

	"github.com/parquet-go/parquet-go"
)

// keyWriter writes key groups column by column with key-aligned pages: it
// ends a column's page (ColumnWriter.Flush) before a key that would not fit
// in it, and gives a key larger than the target pages of its own, cut at row
// boundaries. Columns are paged independently: a narrow column packs more
// keys per page than a wide one.
type keyWriter struct {
	pw     *parquet.Writer
	target int // Options.PageBytes
	fs     *FileStats

	open    []bool  // per column: the current page holds values
	pending []int64 // per column: estimated value bytes of the current page

	// The current group, split per column.
	vals    [][]parquet.Value
	rowEnd  [][]int   // per column: end of each row's values in vals
	rowSize [][]int64 // per column: estimated bytes of each row's values
}

func newKeyWriter(pw *parquet.Writer, cols *columns, target int, fs *FileStats) *keyWriter {
	n := cols.leaves
	return &keyWriter{
		pw: pw, target: target, fs: fs,
		open: make([]bool, n), pending: make([]int64, n),
		vals: make([][]parquet.Value, n), rowEnd: make([][]int, n), rowSize: make([][]int64, n),
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

// writeGroup writes the rows of one key.
func (w *keyWriter) writeGroup(rows []parquet.Row) error {
	for c := range w.vals {
		w.vals[c], w.rowEnd[c], w.rowSize[c] = w.vals[c][:0], w.rowEnd[c][:0], w.rowSize[c][:0]
	}
	for _, r := range rows {
		r.Range(func(c int, vs []parquet.Value) bool {
			var size int64
			for _, v := range vs {
				size += valueSize(v)
			}
			w.vals[c] = append(w.vals[c], vs...)
			w.rowEnd[c] = append(w.rowEnd[c], len(w.vals[c]))
			w.rowSize[c] = append(w.rowSize[c], size)
			return true
		})
	}
	target := int64(w.target)
	for c, cw := range w.pw.ColumnWriters() {
		if len(w.rowEnd[c]) != len(rows) {
			return fmt.Errorf("prepared: column %d has values for %d of %d rows", c, len(w.rowEnd[c]), len(rows))
		}
		var total int64
		for _, s := range w.rowSize[c] {
			total += s
		}
		switch {
		case target <= 0: // one page per key (PageBytesPerKey)
			if err := w.write(cw, c, 0, len(rows)); err != nil {
				return err
			}
			if err := w.flush(cw, c); err != nil {
				return err
			}
			w.fs.MaxPagesPerKey = max(w.fs.MaxPagesPerKey, 1)
		case total <= target: // the whole key in the current page or the next
			if w.open[c] && w.pending[c]+total > target {
				if err := w.flush(cw, c); err != nil {
					return err
				}
			}
			if err := w.write(cw, c, 0, len(rows)); err != nil {
				return err
			}
			w.open[c] = true
			w.pending[c] += total
			w.fs.MaxPagesPerKey = max(w.fs.MaxPagesPerKey, 1)
		default: // a key larger than a page: pages of its own
			if w.open[c] {
				if err := w.flush(cw, c); err != nil {
					return err
				}
			}
			spans, from := 0, 0
			var acc int64
			for i, s := range w.rowSize[c] {
				if acc > 0 && acc+s > target {
					if err := w.writeAndFlush(cw, c, from, i); err != nil {
						return err
					}
					spans++
					from, acc = i, 0
				}
				acc += s
			}
			if err := w.writeAndFlush(cw, c, from, len(rows)); err != nil {
				return err
			}
			spans++
			w.fs.MaxPagesPerKey = max(w.fs.MaxPagesPerKey, spans)
		}
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
