package rowindex

import (
	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/prepared"
)

// Reading nested co-grouped files (prepared.Options.CoGroup): a stored row
// holds a key's rows as one LIST per column, so a lookup reads the key's
// stored rows (repeated leaves, decoded by the general path) and expands
// each into the source's rows (prepared.CoGroup.Expand): the same leaf
// values, types and column order as the file before it was prepared. A
// stored row is a block of rows like a co-grouped blob's, so limits and
// cursors cut and resume inside it the same way (Row.block).

// nestRead is how a lookup reads one nested co-grouped file for a set of
// requested columns.
type nestRead struct {
	g    *prepared.CoGroup
	read []string // the data file's columns to read
	want []bool   // per source leaf: returned
}

// loadCoGroup decodes a nested co-grouped file's marker when its metadata
// loads. A marker that does not match the file is kept as fm.coGroupErr:
// the metadata still serves a build (the key column), lookups fail.
func loadCoGroup(o object, fm *fileMeta) {
	g, ok, err := prepared.CoGroupOf(fm.f)
	switch {
	case !ok:
	case err != nil:
		fm.coGroupErr = fileChanged(o.uri, corruptReason+"co-group marker", err)
	default:
		fm.coGroup = g
		fm.charge += int64(len(g.Marker.Schema)) + 512
	}
}

// nestColumns maps the requested top-level columns (nil: all of the
// source's) to the columns to read: the same names, plus the key (checked
// against the index) and, when only the key is asked, one list to count
// the stored row's rows by.
func nestColumns(g *prepared.CoGroup, uri string, columns []string) (*nestRead, error) {
	src := g.Schema.Root()
	if columns == nil {
		for _, c := range src.Columns() {
			columns = append(columns, c.Name())
		}
	}
	nr := &nestRead{g: g, want: make([]bool, len(g.Schema.Schema().Columns()))}
	lists := 0
	for _, name := range columns {
		sc := src.Column(name)
		if sc == nil {
			return nil, badQuery("column %q is not in %s", name, uri)
		}
		for _, l := range leavesOf(sc) {
			nr.want[l] = true
		}
		nr.read = append(nr.read, name)
		if name != g.Marker.Key {
			lists++
		}
	}
	nr.read = append(nr.read, g.Marker.Key)
	if lists == 0 {
		for _, c := range src.Columns() {
			if c.Name() != g.Marker.Key {
				nr.read = append(nr.read, c.Name())
				break
			}
		}
	}
	return nr, nil
}

// expand appends to dst the source rows of one stored row r, each like
// tmpl, with the requested leaves only.
func (nr *nestRead) expand(dst []Row, r parquet.Row, tmpl Row) ([]Row, error) {
	rows, err := nr.g.Expand(nil, r)
	if err != nil {
		return dst, fileChanged(tmpl.File, corruptReason+"co-grouped row", err)
	}
	for j, vals := range rows {
		kept := vals[:0]
		for _, x := range vals {
			if nr.want[x.Column()] {
				kept = append(kept, x)
			}
		}
		t := tmpl
		t.Values, t.bi, t.file = kept, int64(j), nr.g.Schema
		dst = append(dst, t)
	}
	return dst, nil
}
