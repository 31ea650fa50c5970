// Package fileindex is Ariadne's file index (spec §3, §5): per data file, a
// summary of each indexed column — exact value sets, bloom filters, min/max
// ranges, newest version per key, computed expressions, fields inside
// arrays — kept in Delta tables under the index folder, maintained
// incrementally by Update, and used by Locate to find the files that can
// hold given keys and by Join to read only those files.
//
// A *FileIndex wraps an *index.Index (the registry's handle: metadata,
// FileList, locks, preflight) and is safe for concurrent use: queries read
// immutable per-Delta-version views and carry their own options; writers
// coordinate through the index's update lock and Delta commits.
package fileindex

import (
	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/store"
)

// Options configure a FileIndex.
type Options struct {
	// Config holds the §7 tunables; zero = the index catalog's.
	Config *config.Config
	// Resolver opens data files by URI; nil = the catalog's.
	Resolver *store.Resolver
	// Progress, when set, receives progress of long operations (update,
	// compact, vacuum).
	Progress func(Progress)
	// IgnoreLocateSnapshots makes every view of a table version scan the
	// main table instead of reading the version's locate snapshot, as for
	// an index that has none (one written by the Spark library, or by an
	// update before snapshots). Answers are identical either way; the
	// option is there to rule out a suspect snapshot and to measure what
	// snapshots save on a cold locate (bench/fileindexbench).
	IgnoreLocateSnapshots bool
}

// Progress reports how far a long operation has come.
type Progress struct {
	Phase       string // "read", "analyze", "stage", "merge", "recover", "snapshot", "compact", "vacuum"
	Done, Total int    // units of the phase (files or batches)
	Bytes       int64  // input bytes processed so far
}

// FileIndex is the file index of one index.
type FileIndex struct {
	ix   *index.Index
	cfg  config.Config
	res  *store.Resolver
	opts Options

	views viewCache // query side: main/large table handles and per-version views

	joinDBs *joinDBPool // emptied join databases for the next join
	// footers keeps data files' decoded footers and page indexes for the
	// next join's late path (a file is opened again when its size, ETag
	// or modification time changed; see pqrow.FileCache).
	footers *pqrow.FileCache
}

// footerCacheBytes bounds the memory of a handle's cached footers and page
// indexes: the benchmark's 300 files of 5 columns take ≈2 MB.
const footerCacheBytes = 64 << 20

// New returns the file index of ix.
func New(ix *index.Index, opts Options) *FileIndex {
	cfg := ix.Catalog().Config()
	if opts.Config != nil {
		cfg = *opts.Config
	}
	res := opts.Resolver
	if res == nil {
		res = ix.Catalog().Resolver()
	}
	fi := &FileIndex{ix: ix, cfg: cfg, res: res, opts: opts}
	fi.views.noSnapshot = opts.IgnoreLocateSnapshots
	fi.joinDBs = newJoinDBPool(fi)
	fi.footers = pqrow.NewFileCache(footerCacheBytes)
	return fi
}

// Index returns the registry handle.
func (fi *FileIndex) Index() *index.Index { return fi.ix }
