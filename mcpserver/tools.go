package mcpserver

import (
	"context"
	"slices"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/aerr"
)

// ListIndexesIn is list_indexes's input (none).
type ListIndexesIn struct{}

// ListIndexesOut is list_indexes's answer.
type ListIndexesOut struct {
	Indexes []ariadne.IndexInfo `json:"indexes"`
}

func (t *tools) listIndexes(ctx context.Context, _ ListIndexesIn) (ListIndexesOut, error) {
	out, err := t.st.ListIndexes(ctx)
	if err != nil {
		return ListIndexesOut{}, err
	}
	return ListIndexesOut{Indexes: out}, nil
}

// DescribeIndexIn is describe_index's input.
type DescribeIndexIn struct {
	Index string `json:"index" jsonschema:"the index name"`
}

func (t *tools) describeIndex(ctx context.Context, in DescribeIndexIn) (*ariadne.Description, error) {
	ix, err := t.index(ctx, in.Index)
	if err != nil {
		return nil, err
	}
	d, err := ix.Describe(ctx)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Filter keeps the rows whose cover column compares with Value by Op.
type Filter struct {
	Column string `json:"column" jsonschema:"a cover column of the row index"`
	Op     string `json:"op" jsonschema:"one of = != < <= > >="`
	Value  Key    `json:"value"`
}

// LookupIn is lookup's input: exactly one of key, keys, or a range (low,
// high, range).
type LookupIn struct {
	Index    string   `json:"index" jsonschema:"the index name"`
	Column   string   `json:"column,omitempty" jsonschema:"the key column or row index name (default: the index's only row index)"`
	RowIndex string   `json:"row_index,omitempty" jsonschema:"the row index to use, when several are on the key column (default: one that can answer: sorted for a range, else covering columns, else the first by name)"`
	Key      *Key     `json:"key,omitempty" jsonschema:"one key"`
	Keys     []Key    `json:"keys,omitempty" jsonschema:"a batch of keys, answered key after key"`
	Low      *Key     `json:"low,omitempty" jsonschema:"lower bound of a key range, inclusive (sorted row indexes)"`
	High     *Key     `json:"high,omitempty" jsonschema:"upper bound of a key range, inclusive (sorted row indexes)"`
	Range    bool     `json:"range,omitempty" jsonschema:"a range query with both bounds open"`
	Columns  []string `json:"columns,omitempty" jsonschema:"columns to return (default all); only key and cover columns: no data file is read"`
	Where    []Filter `json:"where,omitempty" jsonschema:"filters on cover columns, all must pass"`
	Limit    int      `json:"limit,omitempty" jsonschema:"rows per page (default and most: the server's page size)"`
	Cursor   string   `json:"cursor,omitempty" jsonschema:"the previous page's cursor, to continue"`
	NoRows   bool     `json:"no_rows,omitempty" jsonschema:"return the keys' aggregates only"`
}

// LookupRow is one row of a lookup with its source, as the command line's
// and the HTTP server's lookup rows: the data file's URI, the row group,
// the row's number in the file (0-based, over all row groups), and the
// values by column name apart from them.
type LookupRow struct {
	Key      any            `json:"key" jsonschema:"the row's key"`
	File     string         `json:"file" jsonschema:"the data file's URI"`
	RowGroup int            `json:"row_group" jsonschema:"the row group of the row in the file"`
	Row      int64          `json:"row" jsonschema:"the row's number in the file, 0-based over all row groups"`
	Values   map[string]any `json:"values" jsonschema:"the returned columns' values by column name"`
}

// LookupOut is a page of a lookup.
type LookupOut struct {
	Rows       []LookupRow             `json:"rows"`
	Columns    []string                `json:"columns"`
	Cursor     string                  `json:"cursor,omitempty" jsonschema:"pass back to get the next page; absent when no row is left"`
	RowIndex   string                  `json:"row_index"`
	Version    int64                   `json:"version"`
	Aggregates []ariadne.KeyAggregates `json:"aggregates,omitempty"`
}

func (t *tools) lookup(ctx context.Context, in LookupIn) (LookupOut, error) {
	limit, err := t.pageLimit(len(in.Keys), in.Limit)
	if err != nil {
		return LookupOut{}, err
	}
	in.Limit = limit
	ix, err := t.index(ctx, in.Index)
	if err != nil {
		return LookupOut{}, err
	}
	req := ariadne.LookupRequest{Column: in.Column, RowIndex: in.RowIndex, Key: in.Key.Value(), Keys: keyValues(in.Keys), Low: in.Low.Value(), High: in.High.Value(),
		Range: in.Range, Columns: in.Columns, Where: filters(in.Where), NoRows: in.NoRows, Limit: in.Limit, Cursor: in.Cursor}
	res, err := ix.Lookup(ctx, req)
	if err != nil {
		return LookupOut{}, err
	}
	out := LookupOut{Rows: make([]LookupRow, len(res.Rows)), Columns: res.Columns, Cursor: res.Cursor, RowIndex: res.RowIndex,
		Version: res.Version, Aggregates: res.Aggregates}
	if out.Columns == nil {
		out.Columns = []string{}
	}
	for i, r := range res.Rows {
		out.Rows[i] = LookupRow{Key: r.Key, File: r.File, RowGroup: r.RowGroup, Row: r.Row, Values: r.Values}
	}
	return out, nil
}

// QueryKeyIn is query_key's input: the rows as lookup selects them
// (exactly one of key, keys, or a range) and the query over them.
type QueryKeyIn struct {
	Index    string   `json:"index" jsonschema:"the index name"`
	Column   string   `json:"column,omitempty" jsonschema:"the key column or row index name (default: the index's only row index)"`
	RowIndex string   `json:"row_index,omitempty" jsonschema:"the row index to use, when several are on the key column (default: chosen as lookup chooses)"`
	Key      *Key     `json:"key,omitempty" jsonschema:"one key"`
	Keys     []Key    `json:"keys,omitempty" jsonschema:"a batch of keys"`
	Low      *Key     `json:"low,omitempty" jsonschema:"lower bound of a key range, inclusive (sorted row indexes)"`
	High     *Key     `json:"high,omitempty" jsonschema:"upper bound of a key range, inclusive (sorted row indexes)"`
	Range    bool     `json:"range,omitempty" jsonschema:"a range query with both bounds open"`
	Columns  []string `json:"columns,omitempty" jsonschema:"the columns of table rows (default all); key and cover columns only: no data file is read"`
	Where    []Filter `json:"where,omitempty" jsonschema:"filters on cover columns applied before loading"`
	SQL      string   `json:"sql" jsonschema:"one read-only DuckDB query over the table rows, e.g. SELECT count(*) AS n FROM rows"`
	Limit    int      `json:"limit,omitempty" jsonschema:"most result rows (default and most: the server's answer size)"`
}

// QueryKeyOut is query_key's answer.
type QueryKeyOut struct {
	Columns   []string         `json:"columns"`
	Rows      []map[string]any `json:"rows"`
	Truncated bool             `json:"truncated" jsonschema:"the query had more rows than limit"`
	InputRows int64            `json:"input_rows" jsonschema:"rows loaded into the table rows"`
	RowIndex  string           `json:"row_index"`
	Version   int64            `json:"version"`
}

func (t *tools) queryKey(ctx context.Context, in QueryKeyIn) (QueryKeyOut, error) {
	limit, err := t.pageLimit(len(in.Keys), in.Limit)
	if err != nil {
		return QueryKeyOut{}, err
	}
	in.Limit = limit
	ix, err := t.index(ctx, in.Index)
	if err != nil {
		return QueryKeyOut{}, err
	}
	req := ariadne.LookupSQLRequest{Column: in.Column, RowIndex: in.RowIndex, Key: in.Key.Value(), Keys: keyValues(in.Keys), Low: in.Low.Value(), High: in.High.Value(),
		Range: in.Range, Columns: in.Columns, Where: filters(in.Where), SQL: in.SQL, Limit: in.Limit}
	res, err := ix.LookupSQL(ctx, req)
	if err != nil {
		return QueryKeyOut{}, err
	}
	out := QueryKeyOut{Columns: res.Columns, Rows: make([]map[string]any, len(res.Rows)), Truncated: res.Truncated,
		InputRows: res.InputRows, RowIndex: res.RowIndex, Version: res.Version}
	if out.Columns == nil {
		out.Columns = []string{}
	}
	for i := range res.Rows {
		out.Rows[i] = res.Record(i)
	}
	return out, nil
}

// LocateIn is locate's input.
type LocateIn struct {
	Index  string           `json:"index" jsonschema:"the index name"`
	Keys   map[string][]Key `json:"keys" jsonschema:"index column to values: AND across columns, OR within one"`
	PerKey bool             `json:"per_key,omitempty" jsonschema:"also answer each column value alone"`
}

// LocateOut is locate's answer.
type LocateOut struct {
	Files  []string           `json:"files"`
	PerKey []ariadne.KeyFiles `json:"per_key,omitempty"`
}

func (t *tools) locate(ctx context.Context, in LocateIn) (LocateOut, error) {
	n := 0
	for _, ks := range in.Keys {
		n += len(ks)
	}
	if n > t.lim.MaxKeys {
		return LocateOut{}, aerr.Invalid("%d values: at most %d per call", n, t.lim.MaxKeys)
	}
	ix, err := t.index(ctx, in.Index)
	if err != nil {
		return LocateOut{}, err
	}
	res, err := ix.Locate(ctx, ariadne.LocateRequest{Keys: keyMap(in.Keys), PerKey: in.PerKey})
	if err != nil {
		return LocateOut{}, err
	}
	return LocateOut{Files: res.Files, PerKey: res.PerKey}, nil
}

// JoinIn is join's input.
type JoinIn struct {
	Index  string           `json:"index" jsonschema:"the index name"`
	Keys   map[string][]Key `json:"keys" jsonschema:"the key set by column: lists of equal length, row i is the i-th value of each"`
	On     []string         `json:"on,omitempty" jsonschema:"join columns (default every key column); at least one must be an index column"`
	How    string           `json:"how,omitempty" jsonschema:"inner (default), left, right, full, semi or anti"`
	Select []string         `json:"select,omitempty" jsonschema:"index-side columns to keep (must include the join columns)"`
	Limit  int              `json:"limit,omitempty" jsonschema:"most rows returned (default and most: the server's page size)"`
	Engine string           `json:"engine,omitempty" jsonschema:"the join engine: duckdb or spark, as the server allows (default: the server's)"`
}

// JoinOut is join's answer.
type JoinOut struct {
	Columns      []string         `json:"columns"`
	Rows         []map[string]any `json:"rows"`
	Truncated    bool             `json:"truncated" jsonschema:"more rows exist beyond the limit"`
	FilesLocated int              `json:"files_located"`
}

func (t *tools) join(ctx context.Context, in JoinIn) (JoinOut, error) {
	n := 0
	for _, ks := range in.Keys {
		n = max(n, len(ks))
	}
	if n > t.lim.MaxKeys {
		return JoinOut{}, aerr.Invalid("%d key rows: at most %d per call", n, t.lim.MaxKeys)
	}
	if in.Limit < 0 {
		return JoinOut{}, aerr.Invalid("limit %d: want 0 or more", in.Limit)
	}
	if in.Limit == 0 || in.Limit > t.lim.MaxRows {
		in.Limit = t.lim.MaxRows
	}
	if in.Engine != "" && !slices.Contains(t.lim.JoinEngines, in.Engine) {
		return JoinOut{}, aerr.Invalid("engine %q: this server runs joins on %v", in.Engine, t.lim.JoinEngines)
	}
	ix, err := t.index(ctx, in.Index)
	if err != nil {
		return JoinOut{}, err
	}
	if in.Keys == nil {
		in.Keys = map[string][]Key{}
	}
	rows, err := ix.Join(ctx, ariadne.JoinRequest{Keys: keyMap(in.Keys), On: in.On, How: in.How, Select: in.Select, Engine: in.Engine})
	if err != nil {
		return JoinOut{}, err
	}
	defer rows.Close()
	out := JoinOut{Columns: rows.Columns(), Rows: []map[string]any{}, FilesLocated: len(rows.Files())}
	for rows.Next() {
		if len(out.Rows) == in.Limit {
			out.Truncated = true
			break
		}
		out.Rows = append(out.Rows, rows.Record())
	}
	if err := rows.Err(); err != nil {
		return JoinOut{}, err
	}
	return out, nil
}

// pageLimit checks a call's key count and row limit against the server's
// limits and returns the rows to ask for (0: the server's most).
func (t *tools) pageLimit(keys, limit int) (int, error) {
	if keys > t.lim.MaxKeys {
		return 0, aerr.Invalid("%d keys: at most %d per call", keys, t.lim.MaxKeys)
	}
	if limit < 0 {
		return 0, aerr.Invalid("limit %d: want 0 or more", limit)
	}
	if limit == 0 || limit > t.lim.MaxRows {
		limit = t.lim.MaxRows
	}
	return limit, nil
}

// filters turns the tool's filters into the face's.
func filters(in []Filter) []ariadne.Filter {
	var out []ariadne.Filter
	for _, f := range in {
		out = append(out, ariadne.Filter{Column: f.Column, Op: f.Op, Value: f.Value.v})
	}
	return out
}
