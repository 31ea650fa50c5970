package fileindex

import (
	"context"
	"fmt"
	"strings"

	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/internal/duck"
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
	table  map[string]string // uri → its table
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
		c.table = map[string]string{}
	}
	tables := make([]string, len(uris))
	for i, u := range uris {
		tables[i] = c.cacheTable()
		if err := s.loadInto(ctx, tables[i], []string{u}); err != nil {
			return err
		}
		c.table[u] = tables[i]
	}
	c.used += size
	return s.unionSrc(ctx, tables)
}

// loadBatch makes the batch's rows src with view t over it, as load does:
// kept files from their tables, the others read into one more table.
func (s *session) loadBatch(ctx context.Context, uris []string) error {
	var tables, fresh []string
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
		if err := s.loadInto(ctx, freshTable, fresh); err != nil {
			return err
		}
		tables = append(tables, freshTable)
	}
	return s.unionSrc(ctx, tables)
}

// freshTable holds a batch's files that were not kept.
const freshTable = "_ariadne_fresh"

// loadInto reads uris (streamed by our readers, §5.9, read ahead of the
// appender) into a new table.
func (s *session) loadInto(ctx context.Context, table string, uris []string) error {
	rel := datafile.NewRelation(s.read, s.fi.res, uris, FilenameColumn)
	defer rel.Close()
	pre := newPrefetch(ctx, rel)
	defer pre.close()
	if _, err := s.db.Load(ctx, table, pre); err != nil {
		return err
	}
	s.names = rel.Schema().Names()
	return nil
}

// unionSrc defines src over tables (a view, or a copy when there are more
// than unionGroup) and view t over src.
func (s *session) unionSrc(ctx context.Context, tables []string) error {
	union := func(tbs []string) string {
		sel := make([]string, len(tbs))
		for i, tb := range tbs {
			sel[i] = "SELECT * FROM " + duck.Ident(tb)
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
			if err := s.db.Drop(ctx, tb); err != nil {
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
		s.db.Drop(ctx, tb)
	}
	s.cache.table, s.cache.used = nil, 0
}
