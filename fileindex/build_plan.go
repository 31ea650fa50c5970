package fileindex

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
)

// colKind says how a column's values are drawn from the batch's rows.
type colKind int

const (
	kindRegular  colKind = iota + 1 // a source column
	kindComputed                    // a computed column of the view
	kindExploded                    // a field of the elements of an array column
	kindTemporal                    // (value, max timestamp) pairs
)

// valueCol is one column whose per-file values the build collects: a storage
// column (regular, computed, exploded alias, temporal value), or the source
// of a bloom or range index.
type valueCol struct {
	name string
	kind colKind
	typ  schema.Type // the type of one value (the element type of the stored array)
	// expr is the SQL expression of one value over view t (for exploded
	// columns, the list expression that is unnested).
	expr string
	// tsExpr and tsType are the temporal timestamp expression and type.
	tsExpr string
	tsType schema.Type
	// arrayPath and fieldPath are an exploded column's array column and
	// element field; tsPath is a temporal column's timestamp column (the
	// paths the Go summaries draw values from).
	arrayPath, fieldPath string
	tsPath               string
}

// bloomCol is an explicit bloom index.
type bloomCol struct {
	valueCol
	fpr float64
}

// buildPlan is what an update builds, derived once per update from the
// metadata and the stored schema: the columns, their types and SQL, and the
// projection the data files are read with.
type buildPlan struct {
	format   string
	src      *schema.Struct
	readOpts map[string]string
	// readColumns is the top-level projection (nil: every column, needed
	// when computed expressions may reference any column).
	readColumns []string
	computed    []duck.Computed
	// storage are the storage columns (§0): regular, computed, exploded
	// aliases, temporal value columns, in metadata order.
	storage []valueCol
	blooms  []bloomCol
	ranges  []valueCol
	// autoBloom are the auto-bloom registrations of the metadata that are
	// eligible (regular, computed or exploded storage columns).
	autoBloom []string
	largeL    int64
	autoFPR   float64
}

// hasIndexColumns reports whether any index column is configured.
func (p *buildPlan) hasIndexColumns() bool {
	return len(p.storage)+len(p.blooms)+len(p.ranges)+len(p.autoBloom) > 0
}

// storageCol returns the storage column named name.
func (p *buildPlan) storageCol(name string) (valueCol, bool) {
	for _, c := range p.storage {
		if c.name == name {
			return c, true
		}
	}
	return valueCol{}, false
}

// autoBloomEligible reports whether a storage column may carry an auto-bloom
// filter (§3.9: regular, computed and exploded, not temporal).
func autoBloomEligible(c valueCol) bool { return c.kind != kindTemporal }

// countedCols are the columns whose per-file distinct counts the pre-flight
// analysis computes: the storage columns (for batching and large-pair
// classification) and the bloom columns (to size each file's filter).
func (p *buildPlan) countedCols() []valueCol {
	out := slices.Clone(p.storage)
	for _, b := range p.blooms {
		out = append(out, b.valueCol)
	}
	return out
}

// pathExpr renders a dotted column path over view t: t."a"."b".
func pathExpr(path string) string {
	var b strings.Builder
	b.WriteString("t")
	for _, seg := range strings.Split(path, ".") {
		b.WriteString(".")
		b.WriteString(duck.Ident(seg))
	}
	return b.String()
}

// fieldExpr renders a dotted field path over lambda variable e.
func fieldExpr(path string) string {
	var b strings.Builder
	b.WriteString("e")
	for _, seg := range strings.Split(path, ".") {
		b.WriteString(".")
		b.WriteString(duck.Ident(seg))
	}
	return b.String()
}

// root returns the top-level column of a dotted path.
func pathRoot(path string) string {
	if i := strings.IndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return path
}

// newBuildPlan derives the plan from m and the stored schema. computedTypes
// holds the result type of each computed column (see computedTypes).
func newBuildPlan(m *metadata.Metadata, src *schema.Struct, computedTypes map[string]schema.Type, largeL int64, autoFPR float64) (*buildPlan, error) {
	p := &buildPlan{format: m.Format, src: src, readOpts: map[string]string{}, largeL: largeL, autoFPR: autoFPR}
	for k, v := range m.ReadOptions.All() {
		p.readOpts[k] = v
	}
	for k, v := range m.ComputedIndexes.All() {
		p.computed = append(p.computed, duck.Computed{Name: k, Expr: v})
	}
	var roots []string
	need := func(path string) {
		if r := pathRoot(path); !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	// The view's columns: computed columns replace source columns of the
	// same name, so their type wins.
	colType := func(path string) (schema.Type, error) {
		if t, ok := computedTypes[path]; ok {
			return t, nil
		}
		f, ok := src.Resolve(path)
		if !ok {
			return nil, &ColumnError{Column: path}
		}
		return f.Type, nil
	}
	seen := map[string]bool{}
	add := func(c valueCol) {
		if !seen[c.name] {
			seen[c.name] = true
			p.storage = append(p.storage, c)
		}
	}
	for _, c := range m.Indexes {
		if _, ok := computedTypes[c]; ok {
			continue // a computed index of the same name replaces it (§9 item 16)
		}
		t, err := colType(c)
		if err != nil {
			return nil, err
		}
		need(c)
		add(valueCol{name: c, kind: kindRegular, typ: t, expr: pathExpr(c)})
	}
	for _, c := range p.computed {
		t, ok := computedTypes[c.Name]
		if !ok {
			return nil, fmt.Errorf("fileindex: no type for computed index %q", c.Name)
		}
		add(valueCol{name: c.Name, kind: kindComputed, typ: t, expr: pathExpr(c.Name)})
	}
	for _, x := range m.ExplodedFieldIndexes {
		at, err := colType(x.ArrayColumn)
		if err != nil {
			return nil, err
		}
		arr, ok := at.(*schema.Array)
		if !ok {
			return nil, &ColumnError{Column: x.ArrayColumn, Reason: fmt.Sprintf("is %s, not an array", schema.TypeName(at))}
		}
		elem, ok := arr.Element.(*schema.Struct)
		if !ok {
			return nil, &ColumnError{Column: x.ArrayColumn, Reason: "has no struct elements to take field " + x.FieldPath + " from"}
		}
		f, ok := elem.Resolve(x.FieldPath)
		if !ok {
			return nil, &ColumnError{Column: x.ArrayColumn + "." + x.FieldPath}
		}
		need(x.ArrayColumn)
		add(valueCol{name: x.AsColumn, kind: kindExploded, typ: f.Type, arrayPath: x.ArrayColumn, fieldPath: x.FieldPath,
			expr: fmt.Sprintf("list_transform(%s, e -> %s)", pathExpr(x.ArrayColumn), fieldExpr(x.FieldPath))})
	}
	for _, tc := range m.TemporalIndexes {
		vt, err := colType(tc.Column)
		if err != nil {
			return nil, err
		}
		tt, err := colType(tc.TimestampColumn)
		if err != nil {
			return nil, err
		}
		need(tc.Column)
		need(tc.TimestampColumn)
		add(valueCol{name: tc.Column, kind: kindTemporal, typ: vt, expr: pathExpr(tc.Column),
			tsExpr: pathExpr(tc.TimestampColumn), tsType: tt, tsPath: tc.TimestampColumn})
	}
	for _, b := range m.BloomIndexes {
		t, err := colType(b.Column)
		if err != nil {
			return nil, err
		}
		need(b.Column)
		p.blooms = append(p.blooms, bloomCol{valueCol: valueCol{name: b.Column, kind: kindRegular, typ: t, expr: pathExpr(b.Column)}, fpr: b.FPR})
	}
	for _, r := range m.RangeIndexes {
		t, err := colType(r.Column)
		if err != nil {
			return nil, err
		}
		need(r.Column)
		p.ranges = append(p.ranges, valueCol{name: r.Column, kind: kindRegular, typ: t, expr: pathExpr(r.Column)})
	}
	for _, a := range m.AutoBloomIndexes {
		if c, ok := p.storageCol(a); ok && autoBloomEligible(c) && !slices.Contains(p.autoBloom, a) {
			p.autoBloom = append(p.autoBloom, a)
		}
	}
	if len(p.computed) == 0 {
		// Read only what the definitions need; a computed expression may
		// name any column, so with one we read them all.
		p.readColumns = roots
		if p.readColumns == nil {
			p.readColumns = []string{}
		}
	}
	return p, nil
}

// storedType is the main-table type of a storage column (§4.2).
func storedType(c valueCol) schema.Type {
	if c.kind == kindTemporal {
		return &schema.Array{Element: temporalStruct(c), ContainsNull: true}
	}
	return &schema.Array{Element: c.typ, ContainsNull: true}
}

// temporalStruct is struct<value: T, max_ts: TS>.
func temporalStruct(c valueCol) *schema.Struct {
	return &schema.Struct{Fields: []schema.Field{
		{Name: TemporalValueField, Type: c.typ, Nullable: true},
		{Name: TemporalMaxTSField, Type: c.tsType, Nullable: true},
	}}
}

// largeValueType is the value column type of a large-index table (§4.4).
func largeValueType(c valueCol) schema.Type {
	if c.kind == kindTemporal {
		return temporalStruct(c)
	}
	return c.typ
}

// rangeType is struct<min: T, max: T>.
func rangeType(t schema.Type) *schema.Struct {
	return &schema.Struct{Fields: []schema.Field{
		{Name: RangeMinField, Type: t, Nullable: true},
		{Name: RangeMaxField, Type: t, Nullable: true},
	}}
}

// outputSchema is the schema of the rows one batch stages, without the two
// ordering columns: exactly the main-table columns of §4.2, for the given
// auto-bloom columns.
func (p *buildPlan) outputSchema(autoBloom []string) *schema.Struct {
	st := &schema.Struct{Fields: []schema.Field{{Name: FilenameColumn, Type: schema.String, Nullable: true}}}
	add := func(name string, t schema.Type) {
		st.Fields = append(st.Fields, schema.Field{Name: name, Type: t, Nullable: true})
	}
	for _, c := range p.storage {
		add(c.name, storedType(c))
	}
	for _, b := range p.blooms {
		add(BloomColumn(b.name), schema.Binary)
	}
	for _, r := range p.ranges {
		add(RangeColumn(r.name), rangeType(r.typ))
	}
	for _, a := range autoBloom {
		add(AutoBloomColumn(a), schema.Binary)
	}
	add(FileSizeColumn, schema.Long)
	return st
}

// expectedColumns are the main-table columns the definitions need (§5.4).
func (p *buildPlan) expectedColumns() []string {
	var out []string
	for _, f := range p.outputSchema(p.autoBloom).Fields {
		if f.Name != FilenameColumn && f.Name != FileSizeColumn {
			out = append(out, f.Name)
		}
	}
	return out
}

// computedTypes determines the result type of every computed expression by
// planning it over an empty table with the source schema: a malformed
// expression fails here, before anything is written, as a
// *ComputedIndexError.
func computedTypes(ctx context.Context, db *duck.DB, m *metadata.Metadata, src *schema.Struct) (map[string]schema.Type, error) {
	out := map[string]schema.Type{}
	if m.ComputedIndexes.Len() == 0 {
		return out, nil
	}
	create, err := duck.CreateTableSQL("_ariadne_probe", src)
	if err != nil {
		return nil, err
	}
	if err := db.Exec(ctx, create); err != nil {
		return nil, err
	}
	defer db.Drop(ctx, "_ariadne_probe")
	names := src.Names()
	var applied []duck.Computed
	for k, v := range m.ComputedIndexes.All() {
		// A function Ariadne refuses (no Spark value in DuckDB) is a typed
		// error naming it, before anything is planned.
		if err := duck.CheckFunctions(v); err != nil {
			return nil, &ComputedIndexError{Name: k, Expr: v, Err: err}
		}
		// Expressions apply in order and may use earlier ones; planning
		// them one more at a time makes the error name the culprit.
		applied = append(applied, duck.Computed{Name: k, Expr: v})
		q := duck.SelectComputed("_ariadne_probe", names, applied) + " LIMIT 0"
		rows, err := db.Query(ctx, q)
		if err != nil {
			return nil, &ComputedIndexError{Name: k, Expr: v, Err: err}
		}
		st := rows.Schema()
		rows.Close()
		f, ok := st.Field(k)
		if !ok {
			return nil, &ComputedIndexError{Name: k, Expr: v, Err: fmt.Errorf("no result column")}
		}
		out[k] = f.Type
	}
	return out, nil
}
