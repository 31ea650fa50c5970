package index

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/lock"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/store"
)

// Options configure a Catalog. The zero value is usable: default config, a
// private resolver, the host name as lock owner, the wall clock.
type Options struct {
	// Config holds the §7 tunables (lock timings, limits, ...).
	Config config.Config
	// Resolver opens the stores that hold data files (for file sizes and
	// reads). nil = a private resolver with default options.
	Resolver *store.Resolver
	// Owner is recorded in lock files; default: the host name.
	Owner string
	// Now returns the current time; default time.Now.
	Now func() time.Time
	// OnLockEvent, when set, is told when an operation waits for a lock
	// held by a live holder and when it takes over a lock whose holder is
	// gone (lock.Event; its String is a message for the user).
	OnLockEvent func(lock.Event)
}

// Catalog is the set of indexes under one store root (spec §2.4): it
// creates, opens, lists, describes and removes them. It caches nothing, so
// every call sees the store as it is; it is safe for concurrent use.
type Catalog struct {
	root store.Store
	opts Options
}

// NewCatalog returns the catalog of the indexes under root.
func NewCatalog(root store.Store, opts Options) *Catalog {
	if opts.Config == (config.Config{}) {
		opts.Config = config.Defaults()
	}
	if opts.Resolver == nil {
		opts.Resolver = store.NewResolver(store.ResolverOptions{})
	}
	if opts.Owner == "" {
		if h, err := os.Hostname(); err == nil {
			opts.Owner = h
		} else {
			opts.Owner = "ariadne-go"
		}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Catalog{root: root, opts: opts}
}

// Root returns the store root.
func (c *Catalog) Root() store.Store { return c.root }

// Resolver returns the resolver used for data files.
func (c *Catalog) Resolver() *store.Resolver { return c.opts.Resolver }

// Config returns the catalog's configuration.
func (c *Catalog) Config() config.Config { return c.opts.Config }

// Summary describes one index (spec §2.4 IndexSummary).
type Summary struct {
	Name                 string   `json:"name"`
	Format               string   `json:"format"`
	Columns              []string `json:"columns"`
	RegularIndexes       []string `json:"regular_indexes"`
	BloomIndexes         []string `json:"bloom_indexes"`
	ComputedIndexes      []string `json:"computed_indexes"`
	TemporalIndexes      []string `json:"temporal_indexes"`
	RangeIndexes         []string `json:"range_indexes"`
	ExplodedFieldIndexes []string `json:"exploded_field_indexes"`
	FileCount            int64    `json:"file_count"`
	TotalIndexedFileSize int64    `json:"total_indexed_file_size"`
	MetadataVersion      *int     `json:"metadata_version,omitempty"`
	StorageFormatVersion *int     `json:"storage_format_version,omitempty"`
}

// List returns the names of the indexes (sub-folders of <root>/indexes that
// hold a metadata.json), sorted ascending. It costs one List request plus
// one Stat per candidate folder.
func (c *Catalog) List(ctx context.Context) ([]string, error) {
	var names []string
	for info, err := range c.root.List(ctx, store.ListOptions{Prefix: indexesDir + "/", Delimiter: "/"}) {
		if err != nil {
			return nil, err
		}
		if !info.IsDir {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(info.Key, indexesDir+"/"), "/")
		if ValidateName(name) != nil {
			continue // not something we created; never follow it
		}
		ok, err := store.Exists(ctx, c.root, indexesDir+"/"+name+"/metadata.json")
		if err != nil {
			return nil, err
		}
		if ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// Exists reports whether the index's metadata.json exists. Unlike the Spark
// library (which only rejects blank names here) every name rule applies, so
// a hostile name can never reach the store.
func (c *Catalog) Exists(ctx context.Context, name string) (bool, error) {
	p, err := PathsFor(name)
	if err != nil {
		return false, err
	}
	return store.Exists(ctx, c.root, p.Metadata)
}

// Get opens an existing index without the storage preflight and without
// writing anything (a bare reconnect): ErrIndexNotFound if it does not exist.
func (c *Catalog) Get(ctx context.Context, name string) (*Index, error) {
	p, err := PathsFor(name)
	if err != nil {
		return nil, err
	}
	ix := &Index{cat: c, name: name, paths: p}
	exists, err := ix.load(ctx)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, aerr.IndexNotFound(name)
	}
	return ix, nil
}

// Describe summarises one index after running the storage preflight (which
// may migrate it; versions newer than this build fail with the
// Unsupported… kinds).
func (c *Catalog) Describe(ctx context.Context, name string) (Summary, error) {
	ix, err := c.Get(ctx, name)
	if err != nil {
		return Summary{}, err
	}
	if err := ix.EnsureStorageReady(ctx); err != nil {
		return Summary{}, err
	}
	return ix.summary(ctx)
}

// DescribeAll summarises every listed index. A storage-migration failure
// (including the Unsupported… kinds) aborts the call; any other failure
// skips that index and is returned among the warnings.
func (c *Catalog) DescribeAll(ctx context.Context) ([]Summary, []error, error) {
	names, err := c.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	var out []Summary
	var warns []error
	for _, n := range names {
		s, err := c.Describe(ctx, n)
		switch {
		case err == nil:
			out = append(out, s)
		case errors.Is(err, aerr.ErrStorageMigration), ctx.Err() != nil:
			return nil, warns, err
		default:
			warns = append(warns, fmt.Errorf("index %s skipped: %w", n, err))
		}
	}
	return out, warns, nil
}

// FindIndexes returns the (sorted) names of the indexes whose FileList holds
// fileName exactly.
func (c *Catalog) FindIndexes(ctx context.Context, fileName string) ([]string, error) {
	if strings.TrimSpace(fileName) == "" {
		return nil, aerr.Invalid("fileName must not be null or blank")
	}
	names, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		p, _ := PathsFor(n)
		fl := fileList{root: c.root, key: p.FileList}
		has, err := fl.has(ctx, fileName)
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", n, err)
		}
		if has {
			out = append(out, n)
		}
	}
	return out, nil
}

// Remove deletes an index's folder and its FileList (source data files are
// never touched). Leftovers count: an index is removable when either its
// folder or its FileList holds anything (the lenient check of §2.8). It
// reports whether anything was deleted; ErrIndexNotFound if neither exists.
// Remove takes no lock, as in the Spark library: removing an index that is
// being updated is the caller's decision.
func (c *Catalog) Remove(ctx context.Context, name string) (bool, error) {
	p, err := PathsFor(name)
	if err != nil {
		return false, err
	}
	dirExists, err := prefixExists(ctx, c.root, p.Dir+"/")
	if err != nil {
		return false, err
	}
	flExists, err := prefixExists(ctx, c.root, p.FileList+"/")
	if err != nil {
		return false, err
	}
	if !dirExists && !flExists {
		return false, aerr.IndexNotFound(name)
	}
	n1, err := store.DeleteAll(ctx, c.root, p.Dir+"/")
	if err != nil {
		return n1 > 0, err
	}
	n2, err := store.DeleteAll(ctx, c.root, p.FileList+"/")
	return n1+n2 > 0, err
}

// prefixExists reports whether any object lives under prefix (a "folder").
func prefixExists(ctx context.Context, s store.Store, prefix string) (bool, error) {
	for _, err := range s.List(ctx, store.ListOptions{Prefix: prefix}) {
		if err != nil {
			return false, err
		}
		return true, nil
	}
	return false, nil
}

// loadMetadata reads metadata.json with its version for compare-and-swap.
func (c *Catalog) loadMetadata(ctx context.Context, p Paths) (*metadata.Metadata, metadata.Version, error) {
	return metadata.Load(ctx, c.root, p.Metadata)
}
