package prepared

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/aerr"
)

// Co-grouping as nested Parquet values (Options.CoGroup): one stored row per
// key per file (per block of ≤ blockMaxBytes of values for a heavy key, as
// the co-grouped blob bounds its blocks), with the key as it is and every
// other column a LIST of the key's values in row order:
//
//	required int64 user_id;
//	required group ts (LIST) { repeated group list { required int64 element (TIMESTAMP) } }
//	required group context (LIST) { repeated group list { optional binary element (STRING) } }
//
// Unlike the co-grouped blob, engines compute on the values (DuckDB
// unnest, list_sum; Spark explode/inline(arrays_zip); pyarrow
// list_flatten), and each column stays a column of its own: a reader
// projecting one column reads one leaf. A LIST per column rather than one
// LIST<STRUCT>: the columns keep their names at the top level, so the same
// query names the same column on the source and the nested file, an engine
// aggregates one column without touching the others (list_sum(duration_ms)),
// and the row index maps a requested column to the one leaf of that name;
// the lists of a stored row have the same length by construction (the
// writer emits one element per column per row), which the reader checks.

// CoGroupKey is the key of the key-value metadata entry of a nested
// co-grouped file: a CoGroupMarker as JSON.
const CoGroupKey = "ariadne.cogroup"

// CoGroupLayout names the layout recorded in CoGroupMarker.Layout: the key,
// then every other source column as LIST<element> of its values in row
// order.
const CoGroupLayout = "lists"

// ErrBadCoGroup is the kind of a *CoGroupError: a nested co-grouped file
// whose marker or stored row does not describe its source rows. It is also
// aerr.ErrCorruptDataFile.
var ErrBadCoGroup = errors.New("prepared: bad co-grouped file")

// CoGroupError reports a nested co-grouped file that does not decode.
type CoGroupError struct{ Reason string }

func (e *CoGroupError) Error() string { return "prepared: bad co-grouped file: " + e.Reason }

// Is makes errors.Is true for ErrBadCoGroup and aerr.ErrCorruptDataFile.
func (e *CoGroupError) Is(target error) bool {
	return target == ErrBadCoGroup || target == aerr.ErrCorruptDataFile
}

func badCoGroup(format string, args ...any) error {
	return &CoGroupError{Reason: fmt.Sprintf(format, args...)}
}

// CoGroupChoice records Options.CoGroup in the marker.
type CoGroupChoice struct {
	Layout     string `json:"layout"`     // CoGroupLayout
	BlockBytes int    `json:"blockBytes"` // a stored row holds at most ≈ this many value bytes
}

func (o Options) coGroupChoice() *CoGroupChoice {
	if !o.CoGroup {
		return nil
	}
	return &CoGroupChoice{Layout: CoGroupLayout, BlockBytes: blockMaxBytes}
}

// CoGroupMarker is the JSON under CoGroupKey: how a stored row expands to
// the source's rows.
type CoGroupMarker struct {
	Version int    `json:"version"`
	Layout  string `json:"layout"`
	Key     string `json:"key"`
	// Schema is an empty Parquet file with the source's schema: the rows a
	// stored row expands to, in their original column order and types.
	Schema []byte `json:"schema"`
}

// nestPlan is how a writer turns sorted source rows into stored rows.
type nestPlan struct {
	out    *columns
	marker CoGroupMarker
	// Per source leaf: its output leaf and its maximum definition level
	// in the source (0 required, 1 optional).
	outLeaf []int
	srcDef  []int
	keyLeaf int // the key's source leaf
}

// planNest builds the nested schema from the source columns (relayout'd:
// the output's codec and encodings) and checks that every column is a
// top-level primitive (a list of lists is not built).
func planNest(cols *columns, o Options) (*nestPlan, error) {
	src := cols.schema
	var fields []parquet.Field
	for _, f := range src.Fields() {
		if !f.Leaf() || f.Repeated() {
			return nil, aerr.Invalid("prepared: --co-group nests top-level primitive columns; %q is nested or repeated", f.Name())
		}
		if f.Name() == o.Key {
			fields = append(fields, f)
			continue
		}
		fields = append(fields, &blobField{Node: parquet.List(f), name: f.Name()})
	}
	out := parquet.NewSchema(src.Name(), &layoutNode{Node: src, fields: fields})
	p := &nestPlan{out: &columns{schema: out, leaves: len(out.Columns())}}
	kl, _ := out.Lookup(o.Key)
	p.out.order = []column{{name: o.Key, index: kl.ColumnIndex, typ: cols.order[0].typ}}
	p.keyLeaf = cols.order[0].index
	for _, path := range src.Columns() {
		l, _ := src.Lookup(path...)
		op := path
		if path[0] != o.Key {
			op = []string{path[0], "list", "element"}
		}
		ol, ok := out.Lookup(op...)
		if !ok {
			return nil, fmt.Errorf("prepared: nested column %s not found", strings.Join(op, "."))
		}
		p.outLeaf = append(p.outLeaf, ol.ColumnIndex)
		p.srcDef = append(p.srcDef, l.MaxDefinitionLevel)
	}
	var empty bytes.Buffer
	pw := parquet.NewWriter(&empty, src)
	if err := pw.Close(); err != nil {
		return nil, err
	}
	p.marker = CoGroupMarker{Version: 1, Layout: CoGroupLayout, Key: o.Key, Schema: empty.Bytes()}
	return p, nil
}

// nestStream groups the rows of a sorted stream into stored rows: one per
// run of a key's rows, at most ≈blockMaxBytes of values each.
type nestStream struct {
	keyRuns
	p    *nestPlan
	cols [][]parquet.Value
	last int64 // source rows in the stored row next returned
}

func (s *nestStream) next() (parquet.Row, error) {
	if s.cols == nil {
		s.cols = make([][]parquet.Value, len(s.p.outLeaf))
	}
	for i := range s.cols {
		s.cols[i] = s.cols[i][:0]
	}
	key, n, err := s.nextRun(func(r parquet.Row, i int) int {
		bytes := 0
		for _, v := range r {
			c := v.Column()
			if c == s.p.keyLeaf {
				continue
			}
			// Element levels: the list is required, its repeated group
			// adds one, an optional element one more.
			rep := 1
			if i == 0 {
				rep = 0
			}
			s.cols[c] = append(s.cols[c], v.Clone().Level(rep, v.DefinitionLevel()+1, s.p.outLeaf[c]))
			bytes += runBytes(v)
		}
		return bytes
	})
	if err != nil {
		return nil, err
	}
	s.last = int64(n)
	out := make(parquet.Row, 0, n*len(s.cols)+1)
	// Output leaves are in source leaf order (the key keeps its place).
	for c := range s.cols {
		if c == s.p.keyLeaf {
			out = append(out, key.Level(0, key.DefinitionLevel(), s.p.outLeaf[c]))
			continue
		}
		out = append(out, s.cols[c]...)
	}
	return out, nil
}

// CoGroup expands the stored rows of a nested co-grouped file (CoGroupOf)
// into the source's rows.
type CoGroup struct {
	Marker CoGroupMarker
	// Schema is the source's schema (an empty file).
	Schema *parquet.File
	// SrcLeaf is, per leaf column of the nested file, its source leaf.
	SrcLeaf []int
	// KeyLeaf is the key's leaf in the nested file.
	KeyLeaf int
	srcDef  []int // per nested leaf: the source leaf's max definition level
}

// CoGroupOf returns the expansion of a nested co-grouped file, false for a
// file that is not one; a marker that does not match the file is a
// *CoGroupError.
func CoGroupOf(f *parquet.File) (*CoGroup, bool, error) {
	v, ok := f.Lookup(CoGroupKey)
	if !ok {
		return nil, false, nil
	}
	var m CoGroupMarker
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, true, badCoGroup("%s marker: %v", CoGroupKey, err)
	}
	if m.Version != 1 || m.Layout != CoGroupLayout {
		return nil, true, badCoGroup("version %d, layout %q (this build reads version 1, %q)", m.Version, m.Layout, CoGroupLayout)
	}
	sf, err := parquet.OpenFile(bytes.NewReader(m.Schema), int64(len(m.Schema)))
	if err != nil {
		return nil, true, badCoGroup("schema: %v", err)
	}
	g := &CoGroup{Marker: m, Schema: sf, KeyLeaf: -1}
	for _, path := range f.Schema().Columns() {
		name := path[0]
		want := []string{name, "list", "element"}
		if name == m.Key {
			want = []string{name}
		}
		sl, ok := sf.Schema().Lookup(name)
		if !ok || !slices.Equal(path, want) {
			return nil, true, badCoGroup("column %s is not the key or a list of a source column", strings.Join(path, "."))
		}
		if name == m.Key {
			g.KeyLeaf = len(g.SrcLeaf)
		}
		g.SrcLeaf = append(g.SrcLeaf, sl.ColumnIndex)
		g.srcDef = append(g.srcDef, sl.MaxDefinitionLevel)
	}
	if g.KeyLeaf < 0 || len(g.SrcLeaf) != len(sf.Schema().Columns()) {
		return nil, true, badCoGroup("%d columns for the source's %d, key %q", len(g.SrcLeaf), len(sf.Schema().Columns()), m.Key)
	}
	return g, true, nil
}

// Expand appends to dst the source rows of one stored row r (any subset of
// the nested file's leaves, in leaf order): row i holds the i-th element of
// every list read and the key, each moved to its source leaf. Lists of
// different lengths, or a key and no list to count the rows by, are a
// *CoGroupError.
func (g *CoGroup) Expand(dst []parquet.Row, r parquet.Row) ([]parquet.Row, error) {
	n := -1
	var key parquet.Value
	haveKey := false
	var lists [][]parquet.Value
	for i := 0; i < len(r); {
		c := r[i].Column()
		j := i + 1
		for j < len(r) && r[j].Column() == c {
			j++
		}
		if c < 0 || c >= len(g.SrcLeaf) {
			return dst, badCoGroup("column %d of %d", c, len(g.SrcLeaf))
		}
		if c == g.KeyLeaf {
			if j-i != 1 {
				return dst, badCoGroup("%d key values in a stored row", j-i)
			}
			key, haveKey = r[i], true
		} else {
			if n >= 0 && j-i != n {
				return dst, badCoGroup("lists of %d and %d values in a stored row", n, j-i)
			}
			n = j - i
			lists = append(lists, r[i:j])
		}
		i = j
	}
	if n < 0 {
		return dst, badCoGroup("no list read to count a stored row's rows by")
	}
	for k := range n {
		row := make(parquet.Row, 0, len(lists)+1)
		added := !haveKey
		for _, l := range lists {
			v := l[k]
			c := v.Column()
			if !added && g.KeyLeaf < c {
				row = append(row, key.Level(0, key.DefinitionLevel(), g.SrcLeaf[g.KeyLeaf]))
				added = true
			}
			if (k == 0) != (v.RepetitionLevel() == 0) || v.DefinitionLevel() < 1 || v.DefinitionLevel()-1 > g.srcDef[c] {
				return dst, badCoGroup("element %d of column %d at levels %d/%d", k, c, v.RepetitionLevel(), v.DefinitionLevel())
			}
			row = append(row, v.Level(0, v.DefinitionLevel()-1, g.SrcLeaf[c]))
		}
		if !added {
			row = append(row, key.Level(0, key.DefinitionLevel(), g.SrcLeaf[g.KeyLeaf]))
		}
		dst = append(dst, row)
	}
	return dst, nil
}
