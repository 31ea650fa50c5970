package fileindex

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// DefaultReadCacheBytes is the input the pre-flight analysis keeps loaded in
// the engine for the batch builds when UpdateOptions.ReadCacheBytes is 0.
//
// Reading and loading a file cost more than everything else its analysis
// and its batch do (over half of both: issue 3), so a file whose loaded
// rows are kept is read once instead of twice. The rows live in the
// engine's tables, which stay within its memory limit by spilling to the
// update's private temporary folder: this budget is temporary disk, not
// memory. Loaded rows take ~4.5× their Parquet size (uncompressed values and
// the file name on every row: 300 MB of lakegen Parquet spilled ~1.4 GB),
// so 1 GiB of input is ~5 GiB of spill at most, well within a build host's
// scratch space, and an incremental update of up to ~200 files of 5 MB is
// read once whole. Files past the budget are read again by their batch.
const DefaultReadCacheBytes = 1 << 30

// readCacheMaxFiles bounds the files kept (one engine table each): a batch
// of many small files is then a union of at most this many tables, and the
// catalog stays small. 4,096 files fill the byte budget from 256 KiB a file
// on; smaller files past the count are read twice, which for files that
// small costs little.
const readCacheMaxFiles = 4096

// unionGroup bounds the tables one statement unions: a batch's rows are a
// view over at most this many tables, or else copied into one table this
// many tables at a time (planning a union costs per member).
const unionGroup = 64

// readCache is the files kept loaded by the analysis for the builds, one
// table per file holding its rows (the columns of src, before computed
// columns). A file's table is dropped once its batch is built.
type readCache struct {
	budget int64 // input bytes that may be kept; ≤ 0: none
	used   int64
	seq    int
	table  map[string]srcTable // uri → its table
}

// srcTable is a table of rows of src's columns. A kept file's table may
// lack the filename column (the relation's last): it is one constant per
// file, added by the view, so the appender and the spill do not carry the
// file's name on every row.
type srcTable struct {
	name string
	uri  string // the filename the view adds; "" : the table has the column
}

// cacheTable returns a fresh table name.
func (c *readCache) cacheTable() string {
	c.seq++
	return fmt.Sprintf("_ariadne_read_%d", c.seq)
}

// loadAnalysis loads an analysis chunk of size input bytes as src with view
// t over it, as load does. If the budget allows, each file is loaded into a
// table of its own, kept for its batch, and src is a view over them.
func (s *session) loadAnalysis(ctx context.Context, chunk []*fileAnalysis, size int64) error {
	c := &s.cache
	uris := make([]string, len(chunk))
	for i, a := range chunk {
		uris[i] = a.URI
	}
	if c.budget <= 0 || c.used+size > c.budget || len(c.table)+len(chunk) > readCacheMaxFiles {
		return s.load(ctx, uris)
	}
	s.unload(ctx)
	if c.table == nil {
		c.table = map[string]srcTable{}
	}
	tables := make([]srcTable, len(uris))
	for i, u := range uris {
		tables[i] = srcTable{name: c.cacheTable(), uri: u}
		stripped, err := s.loadInto(ctx, tables[i].name, []string{u}, true)
		if err != nil {
			return err
		}
		if !stripped {
			tables[i].uri = ""
		}
		c.table[u] = tables[i]
	}
	c.used += size
	return s.unionSrc(ctx, tables)
}

// loadBatch makes the batch's rows src with view t over it, as load does:
// kept files from their tables, the others read into one more table.
func (s *session) loadBatch(ctx context.Context, uris []string) error {
	var tables []srcTable
	var fresh []string
	for _, u := range uris {
		if tb, ok := s.cache.table[u]; ok {
			tables = append(tables, tb)
		} else {
			fresh = append(fresh, u)
		}
	}
	if len(tables) == 0 {
		return s.load(ctx, uris)
	}
	s.unload(ctx)
	if len(fresh) > 0 {
		if _, err := s.loadInto(ctx, freshTable, fresh, false); err != nil {
			return err
		}
		tables = append(tables, srcTable{name: freshTable})
	}
	return s.unionSrc(ctx, tables)
}

// freshTable holds a batch's files that were not kept.
const freshTable = "_ariadne_fresh"

// loadInto reads uris (streamed by our readers, §5.9, read ahead of the
// appender) into a new table. With strip, the table leaves out the
// filename column when it is the relation's last (the data has no column
// of that name), and loadInto reports whether it did.
func (s *session) loadInto(ctx context.Context, table string, uris []string, strip bool) (stripped bool, err error) {
	rel := datafile.NewRelation(s.read, s.fi.res, uris, FilenameColumn)
	defer rel.Close()
	s.names = rel.Schema().Names()
	var src duck.Source = rel
	if n := len(s.names); strip && s.names[n-1] == FilenameColumn && !slices.Contains(s.names[:n-1], FilenameColumn) {
		src, stripped = dropLastColumn{rel}, true
	}
	pre := newPrefetch(ctx, src)
	defer pre.close()
	if _, err := s.db.Load(ctx, table, pre); err != nil {
		return false, err
	}
	return stripped, nil
}

// dropLastColumn is a source without its last column.
type dropLastColumn struct{ src duck.Source }

// Schema returns the source's schema without its last field.
func (d dropLastColumn) Schema() *schema.Struct {
	st := d.src.Schema()
	return &schema.Struct{Fields: st.Fields[:len(st.Fields)-1]}
}

// Next returns the source's next batch, each row without its last value.
func (d dropLastColumn) Next(ctx context.Context) ([]pqrow.Row, error) {
	rows, err := d.src.Next(ctx)
	for i, r := range rows {
		rows[i] = r[:len(r)-1]
	}
	return rows, err
}

// unionSrc defines src over tables (a view, or a copy when there are more
// than unionGroup) and view t over src.
func (s *session) unionSrc(ctx context.Context, tables []srcTable) error {
	union := func(tbs []srcTable) string {
		sel := make([]string, len(tbs))
		for i, tb := range tbs {
			if tb.uri != "" {
				sel[i] = "SELECT *, " + duck.String(tb.uri) + " AS " + duck.Ident(FilenameColumn) + " FROM " + duck.Ident(tb.name)
			} else {
				sel[i] = "SELECT * FROM " + duck.Ident(tb.name)
			}
		}
		return strings.Join(sel, " UNION ALL ")
	}
	if len(tables) <= unionGroup {
		if err := s.db.Exec(ctx, "CREATE VIEW src AS "+union(tables)); err != nil {
			return err
		}
		s.srcView = true
		return s.defineView(ctx)
	}
	for i := 0; i < len(tables); i += unionGroup {
		part := union(tables[i:min(i+unionGroup, len(tables))])
		q := "INSERT INTO src " + part
		if i == 0 {
			q = "CREATE TABLE src AS " + part
		}
		if err := s.db.Exec(ctx, q); err != nil {
			return err
		}
	}
	return s.defineView(ctx)
}

// built drops the kept tables of a built batch's files (after unload).
func (s *session) built(ctx context.Context, uris []string) error {
	for _, u := range uris {
		if tb, ok := s.cache.table[u]; ok {
			delete(s.cache.table, u)
			if err := s.db.Drop(ctx, tb.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropCache drops every kept table still held (after a failed batch) and
// resets the budget's use.
func (s *session) dropCache(ctx context.Context) {
	s.unload(ctx)
	for _, tb := range s.cache.table {
		s.db.Drop(ctx, tb.name)
	}
	s.cache.table, s.cache.used = nil, 0
}
