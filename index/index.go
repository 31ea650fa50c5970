package index

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// OpenOptions are what a caller supplies to create or reconnect to an index
// (spec §2.1). A zero field means "not supplied".
type OpenOptions struct {
	// Schema of the data files; required to create an index. On reconnect it
	// must render to exactly the stored schema JSON unless
	// AllowSchemaMismatch is set.
	Schema *schema.Struct
	// Format of the data files: "csv", "json" or "parquet"; required to
	// create; must equal the stored one on reconnect.
	Format string
	// ReadOptions are reader options (header, delimiter, multiLine, ...);
	// merged key by key into the stored ones, new values winning. nil = not
	// supplied.
	ReadOptions map[string]string
	// AllowSchemaMismatch replaces the stored schema when every indexed
	// column still exists in the new one.
	AllowSchemaMismatch bool
}

func (o OpenOptions) supplied() bool {
	return o.Schema != nil || o.Format != "" || o.ReadOptions != nil
}

// Index is a handle on one named index. It is safe for concurrent use: the
// metadata it holds is an immutable snapshot replaced atomically, and every
// change to metadata.json is a compare-and-swap against the version read.
type Index struct {
	cat   *Catalog
	name  string
	paths Paths
	state atomic.Pointer[metaState]
}

// metaState is an immutable metadata snapshot and its stored version.
type metaState struct {
	m   *metadata.Metadata
	ver metadata.Version
}

// Open creates the index or reconnects to it (spec §2.1). A reconnect with
// nothing supplied is read-only: it runs no preflight and writes nothing.
// Errors: ErrInvalidArgument for a bad name; ErrMetadataMissingOrCorrupt;
// ErrSchemaMismatch, ErrIndexNotFoundInNewSchema, ErrFormatMismatch
// (checked in that order, so nothing is persisted when any fails);
// ErrSchemaNotProvided and ErrMissingFormat for a new index; the preflight's
// errors on reconnect.
//
// Two processes creating the same new index race on a put-if-absent of
// metadata.json: the loser retries as a reconnect, so it gets either the
// winner's index or a mismatch error, never a silent overwrite.
func (c *Catalog) Open(ctx context.Context, name string, o OpenOptions) (*Index, error) {
	if err := ValidateNewName(name); err != nil {
		return nil, err
	}
	p, err := PathsFor(name)
	if err != nil {
		return nil, err
	}
	ix := &Index{cat: c, name: name, paths: p}
	for attempt := 0; ; attempt++ {
		err := ix.open(ctx, o)
		if errors.Is(err, metadata.ErrConcurrentUpdate) && attempt < 5 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return ix, nil
	}
}

// load reads metadata.json into the handle; exists is false (and err nil)
// when there is none. One Load (three requests), no separate existence check.
func (ix *Index) load(ctx context.Context) (exists bool, err error) {
	m, ver, err := ix.cat.loadMetadata(ctx, ix.paths)
	if errors.Is(err, store.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ix.state.Store(&metaState{m: m, ver: ver})
	return true, nil
}

func (ix *Index) open(ctx context.Context, o OpenOptions) error {
	c := ix.cat
	exists, err := ix.load(ctx)
	if err != nil {
		return err
	}
	var m *metadata.Metadata
	var ver metadata.Version
	if exists {
		if !o.supplied() {
			return nil // bare reconnect: read-only
		}
		if err := ix.EnsureStorageReady(ctx); err != nil {
			return err
		}
		st := ix.state.Load()
		m, ver = st.m.Clone(), st.ver
	} else {
		m = metadata.NewMetadata("", "")
	}
	changed := !exists

	// Schema (§2.1 step 4): exact string comparison.
	if o.Schema != nil {
		supplied := o.Schema.Marshal()
		switch {
		case !exists:
			m.Schema = supplied
		case supplied != m.Schema && !o.AllowSchemaMismatch:
			return aerr.SchemaMismatch(ix.name)
		case supplied != m.Schema:
			for _, col := range columnsRequiredInSchema(m) {
				if _, ok := o.Schema.Resolve(col); !ok {
					return aerr.IndexNotFoundInNewSchema(col)
				}
			}
			m.Schema = supplied
			changed = true
		}
	} else if !exists {
		return aerr.SchemaNotProvided()
	}

	// Format (step 5).
	if o.Format != "" {
		switch {
		case !exists:
			m.Format = o.Format
		case o.Format != m.Format:
			return aerr.FormatMismatch(ix.name, m.Format, o.Format)
		}
	} else if !exists {
		return aerr.MissingFormat()
	}

	// Read options (step 6): merged, new values win, keys never removed.
	if o.ReadOptions != nil {
		for _, k := range slices.Sorted(maps.Keys(o.ReadOptions)) {
			if old, ok := m.ReadOptions.Get(k); !ok || old != o.ReadOptions[k] {
				m.ReadOptions.Set(k, o.ReadOptions[k])
				changed = true
			}
		}
	}

	if !changed {
		return nil
	}
	newVer, err := metadata.Store(ctx, c.root, ix.paths.Metadata, m, ver)
	if err != nil {
		return err
	}
	ix.state.Store(&metaState{m: m, ver: newVer})
	return nil
}

// columnsRequiredInSchema lists, in the order checked, the columns that a
// replacement schema must still hold (§2.1 step 4): regular, bloom,
// temporal value and timestamp, range.
func columnsRequiredInSchema(m *metadata.Metadata) []string {
	var cols []string
	cols = append(cols, m.Indexes...)
	for _, b := range m.BloomIndexes {
		cols = append(cols, b.Column)
	}
	for _, t := range m.TemporalIndexes {
		cols = append(cols, t.Column, t.TimestampColumn)
	}
	for _, r := range m.RangeIndexes {
		cols = append(cols, r.Column)
	}
	return cols
}

// Name returns the index name.
func (ix *Index) Name() string { return ix.name }

// Paths returns the index's keys under the store root.
func (ix *Index) Paths() Paths { return ix.paths }

// Catalog returns the catalog the index belongs to.
func (ix *Index) Catalog() *Catalog { return ix.cat }

// Metadata returns a copy of the cached metadata (callers may modify it).
func (ix *Index) Metadata() *metadata.Metadata { return ix.state.Load().m.Clone() }

// Format returns the stored data file format.
func (ix *Index) Format() string { return ix.state.Load().m.Format }

// StoredSchema parses the stored schema: ErrMissingSchema when absent,
// ErrSchemaParse when it is not a struct.
func (ix *Index) StoredSchema() (*schema.Struct, error) {
	s := ix.state.Load().m.Schema
	if s == "" {
		return nil, aerr.MissingSchema()
	}
	st, err := schema.Parse(s)
	if err != nil {
		return nil, aerr.SchemaParse(err)
	}
	return st, nil
}

// RefreshMetadata re-reads metadata.json, replacing the cached snapshot.
func (ix *Index) RefreshMetadata(ctx context.Context) error {
	m, ver, err := ix.cat.loadMetadata(ctx, ix.paths)
	if err != nil {
		return err
	}
	ix.state.Store(&metaState{m: m, ver: ver})
	return nil
}

// updateMetadata applies fn to a fresh copy of the metadata and stores it
// with compare-and-swap, re-reading and re-applying fn when another writer
// got there first. fn must be a pure function of its input.
func (ix *Index) updateMetadata(ctx context.Context, fn func(m *metadata.Metadata) (changed bool, err error)) error {
	for attempt := 0; ; attempt++ {
		st := ix.state.Load()
		m := st.m.Clone()
		changed, err := fn(m)
		if err != nil || !changed {
			return err
		}
		ver, err := metadata.Store(ctx, ix.cat.root, ix.paths.Metadata, m, st.ver)
		if errors.Is(err, metadata.ErrConcurrentUpdate) && attempt < 10 {
			if err := ix.RefreshMetadata(ctx); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		ix.state.Store(&metaState{m: m, ver: ver})
		return nil
	}
}

// summary builds the catalog summary of the index.
func (ix *Index) summary(ctx context.Context) (Summary, error) {
	m := ix.state.Load().m
	fl := ix.fileList()
	n, err := fl.count(ctx)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{
		Name:                 ix.name,
		Format:               m.Format,
		Columns:              sortedCopy(metadata.IndexColumns(m)),
		RegularIndexes:       sortedCopy(m.Indexes),
		ComputedIndexes:      sortedCopy(m.ComputedIndexes.Keys()),
		FileCount:            n,
		TotalIndexedFileSize: m.TotalIndexedFileSize,
		MetadataVersion:      m.MetadataVersion,
		StorageFormatVersion: m.StorageFormatVersion,
	}
	for _, b := range m.BloomIndexes {
		s.BloomIndexes = append(s.BloomIndexes, b.Column)
	}
	for _, t := range m.TemporalIndexes {
		s.TemporalIndexes = append(s.TemporalIndexes, t.Column)
	}
	for _, r := range m.RangeIndexes {
		s.RangeIndexes = append(s.RangeIndexes, r.Column)
	}
	for _, e := range m.ExplodedFieldIndexes {
		s.ExplodedFieldIndexes = append(s.ExplodedFieldIndexes, e.AsColumn)
	}
	for _, l := range []*[]string{&s.BloomIndexes, &s.TemporalIndexes, &s.RangeIndexes, &s.ExplodedFieldIndexes, &s.Columns, &s.RegularIndexes, &s.ComputedIndexes} {
		*l = sortedCopy(*l)
	}
	return s, nil
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	if out == nil {
		out = []string{}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
