package index

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// FileEntry is one tracked data file.
type FileEntry struct {
	Name    string    `json:"filename"`
	AddedAt time.Time `json:"added_at"`
}

// fileListSchema is the FileList table's schema as the Spark library writes
// it (§2.5; Spark records both columns as nullable).
var fileListSchema = &schema.Struct{Fields: []schema.Field{
	{Name: "filename", Type: schema.String, Nullable: true},
	{Name: "addedAt", Type: schema.Timestamp, Nullable: true},
}}

// fileList is the Delta table at <root>/filelists/[ariadne_index] <name>.
type fileList struct {
	root store.Store
	key  string
}

func (fl fileList) store() store.Store { return store.Sub(fl.root, fl.key) }

// table opens the table; ok is false when it does not exist.
func (fl fileList) table(ctx context.Context) (*delta.Table, bool, error) {
	t, err := delta.Open(ctx, fl.store())
	if errors.Is(err, delta.ErrNotATable) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("file list: %w", err)
	}
	return t, true, nil
}

// entries returns every tracked file, sorted by name.
func (fl fileList) entries(ctx context.Context) ([]FileEntry, error) {
	t, ok, err := fl.table(ctx)
	if err != nil || !ok {
		return nil, err
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	var out []FileEntry
	for row, err := range snap.Scan(ctx, delta.ScanOptions{Columns: []string{"filename", "addedAt"}}) {
		if err != nil {
			return nil, err
		}
		name, _ := row[0].(string)
		if name == "" {
			continue
		}
		e := FileEntry{Name: name}
		if ts, ok := row[1].(time.Time); ok {
			e.AddedAt = ts
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b FileEntry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (fl fileList) count(ctx context.Context) (int64, error) {
	e, err := fl.entries(ctx)
	return int64(len(e)), err
}

func (fl fileList) has(ctx context.Context, name string) (bool, error) {
	e, err := fl.entries(ctx)
	if err != nil {
		return false, err
	}
	_, found := slices.BinarySearchFunc(e, name, func(a FileEntry, n string) int { return strings.Compare(a.Name, n) })
	return found, nil
}

// add tracks names not yet tracked, all stamped with now; existing entries
// keep their addedAt. It returns how many were new. Callers hold the
// FileList lock, so the read-then-append cannot race another adder.
func (fl fileList) add(ctx context.Context, names []string, now time.Time) (int, error) {
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	existing, err := fl.entries(ctx)
	if err != nil {
		return 0, err
	}
	var rows [][]any
	ts := now.UTC().Truncate(time.Microsecond)
	for _, n := range names {
		if _, found := slices.BinarySearchFunc(existing, n, func(a FileEntry, n string) int { return strings.Compare(a.Name, n) }); !found {
			rows = append(rows, []any{n, ts})
		}
	}
	if len(rows) == 0 {
		return 0, nil
	}
	t, ok, err := fl.table(ctx)
	if err != nil {
		return 0, err
	}
	if !ok {
		if t, err = delta.Create(ctx, fl.store(), fileListSchema, delta.CreateOptions{}); err != nil {
			return 0, fmt.Errorf("file list: create: %w", err)
		}
	}
	if _, err := t.Append(ctx, delta.Rows(rows), delta.WriteOptions{}); err != nil {
		return 0, fmt.Errorf("file list: append: %w", err)
	}
	return len(rows), nil
}

// remove untracks names (absent names are ignored).
func (fl fileList) remove(ctx context.Context, names []string) error {
	t, ok, err := fl.table(ctx)
	if err != nil || !ok {
		return err
	}
	keys := make([]any, len(names))
	for i, n := range names {
		keys[i] = n
	}
	_, err = t.DeleteKeys(ctx, "filename", keys, delta.WriteOptions{})
	return err
}

func (ix *Index) fileList() fileList { return fileList{root: ix.cat.root, key: ix.paths.FileList} }

// Files returns the tracked data files, sorted by name.
func (ix *Index) Files(ctx context.Context) ([]FileEntry, error) { return ix.fileList().entries(ctx) }

// HasFile reports whether name is tracked (exact string match).
func (ix *Index) HasFile(ctx context.Context, name string) (bool, error) {
	if strings.TrimSpace(name) == "" {
		return false, aerr.Invalid("fileName must not be null or blank")
	}
	return ix.fileList().has(ctx, name)
}

// AddFiles tracks data files (spec §5.2): under the index's .filelist.lock,
// names not yet tracked are appended with one timestamp; tracked names keep
// theirs. Names are stored verbatim; use ExpandFiles first to turn paths,
// folders and globs into canonical file URIs. It returns how many names were
// new. An empty list is a no-op that creates nothing.
func (ix *Index) AddFiles(ctx context.Context, names ...string) (int, error) {
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			return 0, aerr.Invalid("File names must not be null or blank")
		}
	}
	if len(names) == 0 {
		return 0, nil
	}
	var added int
	err := ix.withLock(ctx, ix.paths.FileListLock, func(ctx context.Context) error {
		var err error
		added, err = ix.fileList().add(ctx, names, ix.cat.opts.Now())
		return err
	})
	return added, err
}

// removeFiles untracks names under the .filelist.lock. The Spark library
// edits the FileList here without that lock (§9 item 30); taking it closes
// the race with a concurrent AddFiles.
func (ix *Index) removeFiles(ctx context.Context, names []string) error {
	return ix.withLock(ctx, ix.paths.FileListLock, func(ctx context.Context) error {
		return ix.fileList().remove(ctx, names)
	})
}

// ExpandFiles turns what a user typed into the canonical URIs of data files:
// a local path becomes file:///abs/path; an object URI is kept; a folder
// (a prefix with objects below it and no object of its own) expands to the
// files below it; a glob (*, ?, [) in the last segment expands to matching
// files and to the files below matching folders (a glob in an earlier
// segment is refused with aerr.ErrInvalidArgument). Hidden files (names starting with '.' or '_', such as _SUCCESS and
// .crc files written by Spark) are skipped in expansions, as Spark's readers
// skip them. This closes the identity mismatch of §9 item 5: what the
// FileList records is what the index rows are keyed by.
func (ix *Index) ExpandFiles(ctx context.Context, inputs []string) ([]string, error) {
	out, _, err := ix.ExpandFilesSkipped(ctx, inputs)
	return out, err
}

// ExpandFilesSkipped is ExpandFiles that also returns the files a folder's
// expansion left out because their names belong to another format than
// the index's (see ofFormat): a generator's lake.json or a README beside
// Parquet files. Files named one by one, or matched by a glob, are kept
// whatever their names.
func (ix *Index) ExpandFilesSkipped(ctx context.Context, inputs []string) ([]string, []string, error) {
	out, skipped, err := ix.expandFiles(ctx, inputs)
	return out, skipped, err
}

func (ix *Index) expandFiles(ctx context.Context, inputs []string) (out, skipped []string, err error) {
	format := ix.Metadata().Format
	res := ix.cat.opts.Resolver
	// join appends a store key below what the user typed; Canonical then
	// escapes the result, so keys are never escaped twice.
	join := func(dir, rel string) (string, error) {
		return store.Canonical(strings.TrimSuffix(dir, "/") + "/" + rel)
	}
	// folder appends the files below key (what the user typed as in) and
	// returns how many.
	folder := func(s store.Store, key, in string) (int, error) {
		prefix := strings.TrimSuffix(key, "/") + "/"
		n := 0
		for info, err := range s.List(ctx, store.ListOptions{Prefix: prefix}) {
			if err != nil {
				return n, err
			}
			rel := strings.TrimPrefix(info.Key, prefix)
			if hiddenPath(rel) {
				continue
			}
			if !ofFormat(format, path.Base(rel)) {
				skipped = append(skipped, strings.TrimSuffix(in, "/")+"/"+rel)
				continue
			}
			u, err := join(in, rel)
			if err != nil {
				return n, err
			}
			out = append(out, u)
			n++
		}
		return n, nil
	}
	for _, in := range inputs {
		dirRaw, last := in, ""
		if i := strings.LastIndex(in, "/"); i >= 0 {
			dirRaw, last = in[:i], in[i+1:]
		}
		if strings.ContainsAny(dirRaw, "*?[") {
			return nil, nil, aerr.Invalid("%s: glob patterns are matched in the last path segment only (a pattern may match folders: date=2024-06-0[1-3])", in)
		}
		if strings.ContainsAny(last, "*?[") {
			if _, err := path.Match(last, ""); err != nil {
				return nil, nil, aerr.Invalid("bad glob %q: %v", in, err)
			}
			dirURI, err := store.Canonical(dirRaw)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", in, err)
			}
			s, dirKey, err := res.Resolve(ctx, dirURI)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", in, err)
			}
			prefix := strings.TrimSuffix(dirKey, "/") + "/"
			n := 0
			for info, err := range s.List(ctx, store.ListOptions{Prefix: prefix, Delimiter: "/"}) {
				if err != nil {
					return nil, nil, err
				}
				name := strings.TrimSuffix(strings.TrimPrefix(info.Key, prefix), "/")
				if hidden(name) {
					continue
				}
				if ok, _ := path.Match(last, name); !ok {
					continue
				}
				if info.IsDir { // a matching folder: the files below it
					k, err := folder(s, prefix+name, strings.TrimSuffix(dirRaw, "/")+"/"+name)
					if err != nil {
						return nil, nil, err
					}
					n += k
					continue
				}
				u, err := join(dirRaw, name)
				if err != nil {
					return nil, nil, err
				}
				out = append(out, u)
				n++
			}
			if n == 0 {
				return nil, nil, fmt.Errorf("%s: no files match: %w", in, store.ErrNotExist)
			}
			continue
		}
		uri, err := store.Canonical(in)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", in, err)
		}
		s, key, err := res.Resolve(ctx, uri)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", in, err)
		}
		if _, err := s.Stat(ctx, key); err == nil {
			out = append(out, uri)
			continue
		} else if !errors.Is(err, store.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: %w", in, err)
		}
		n, err := folder(s, key, in)
		if err != nil {
			return nil, nil, err
		}
		if n == 0 {
			return nil, nil, fmt.Errorf("%s: %w", in, store.ErrNotExist)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out))), skipped, nil
}

// ofFormat reports whether a file found in a folder may be a data file of
// format: a name with the format's extension (after a compression one for
// text formats), or with no extension at all (Hive and some writers name
// their files 000000_0). Other formats keep everything.
func ofFormat(format, name string) bool {
	n := strings.ToLower(name)
	for _, c := range []string{".gz", ".bz2", ".zst", ".lz4", ".deflate", ".snappy"} {
		if format != "parquet" {
			n = strings.TrimSuffix(n, c)
		}
	}
	ext := path.Ext(n)
	if ext == "" {
		return true
	}
	switch format {
	case "parquet":
		return ext == ".parquet" || ext == ".parq" || ext == ".pq"
	case "csv":
		return ext == ".csv" || ext == ".tsv" || ext == ".txt" || ext == ".psv" || ext == ".dat"
	case "json":
		return ext == ".json" || ext == ".jsonl" || ext == ".ndjson" || ext == ".txt"
	}
	return true
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") }

func hiddenPath(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		if hidden(seg) {
			return true
		}
	}
	return false
}

// newCorrelationID returns a fresh lock correlation id.
func newCorrelationID() string { return uuid.NewString() }
