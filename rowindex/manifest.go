package rowindex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	fastjson "github.com/segmentio/encoding/json"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/store"
)

// FormatVersion is the version of the row index's persisted format (manifest
// and fragments). A manifest with a higher version is refused; every lower
// one is read.
//
// Version 2: fragment row groups store entries in data-file order with
// implied row numbers and no bucket column (diskEntry). A version-1 build
// cannot read them, hence the bump; fragments of format 1 (fragmentColumnsV1) are
// still read, and a row index mixing both (an Update or Compact by this
// build of a version-1 index) is version 2.
//
// Version 3: a hash row index records its bucket hash (Manifest.BucketHash);
// new ones take BucketFNV1aMix, which a version-2 build, ignoring the
// field, would look keys up with the wrong function of, hence the bump.
// Only manifests that need it are written as version 3 (formatNeeded): a
// sorted index, or a hash index of the old hash updated by this build,
// stays version 2 and readable by version-2 builds.
//
// Version 4: Drop commits a tombstone (Manifest.Dropped) as the newest
// version, so that a writer that loaded the index before the Drop loses its
// commit instead of reviving the dropped index over the next Create. Only
// the tombstone is version 4: a version-3 build refuses it as corrupt
// rather than reading an index with no definition.
const FormatVersion = 4

// Folder is the folder under an index folder that holds every row index.
// The Spark library ignores unknown folders there (spec §12 item 7).
const Folder = "row_indexes"

// Kind is the access structure of a row index.
type Kind string

// The kinds of row index.
const (
	// KindHash serves equality lookups in O(1): fragments are partitioned
	// by hash bucket of the key, and a lookup reads one bucket.
	KindHash Kind = "hash"
	// KindSorted serves equality and range lookups (LOW..HIGH): fragments
	// are sorted by key and a lookup reads the row groups whose key range
	// overlaps the query.
	KindSorted Kind = "sorted"
)

// Aggregate is a per-key value computed at build time.
type Aggregate struct {
	// Op is count, sum, min, max or count-by.
	Op string `json:"op"`
	// Column is the column aggregated (empty for count). sum, min and max
	// need a numeric column; count-by a small-cardinality one.
	Column string `json:"column,omitempty"`
}

// String renders the aggregate as on the command line ("sum:duration_ms").
func (a Aggregate) String() string {
	if a.Column == "" {
		return a.Op
	}
	return a.Op + ":" + a.Column
}

// ParseAggregate parses "count", "sum:COL", "min:COL", "max:COL" or
// "count-by:COL".
func ParseAggregate(s string) (Aggregate, error) {
	op, col, _ := strings.Cut(s, ":")
	a := Aggregate{Op: op, Column: col}
	return a, a.validate()
}

func (a Aggregate) validate() error {
	switch a.Op {
	case "count":
		if a.Column != "" {
			return badQuery("count takes no column")
		}
	case "sum", "min", "max", "count-by":
		if a.Column == "" {
			return badQuery("%s needs a column (%s:COL)", a.Op, a.Op)
		}
	default:
		return badQuery("unknown aggregate %q (count, sum:COL, min:COL, max:COL, count-by:COL)", a.Op)
	}
	return nil
}

// Definition is what a row index indexes. It is stored in the manifest,
// never in metadata.json.
type Definition struct {
	Name       string      `json:"name"`
	Key        string      `json:"key"`
	Kind       Kind        `json:"kind"`
	Cover      []string    `json:"cover,omitempty"`
	Aggregates []Aggregate `json:"aggregates,omitempty"`
}

// NameRule states the rule of ValidateName.
const NameRule = "row index names are 1 to 200 bytes of UTF-8 without control characters, '/', '\\' or NUL, not starting with '.'"

// ValidateName checks a row index name: it is a folder name under the
// index (row_indexes/<name>/) and is printed by describe, so path
// separators, "." and "..", control characters and names longer than 200
// bytes are refused. The error matches ErrBadQuery and is an
// aerr.ErrInvalidArgument naming the rule.
func ValidateName(name string) error {
	bad := ""
	switch {
	case name == "":
		bad = "is empty"
	case !utf8.ValidString(name):
		bad = "is not valid UTF-8"
	case len(name) > 200:
		bad = fmt.Sprintf("is %d bytes long", len(name))
	case strings.ContainsAny(name, "/\\\x00"):
		bad = "contains a path separator or NUL"
	case strings.HasPrefix(name, "."):
		bad = "starts with '.'"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		bad = "contains a control character"
	}
	if bad == "" {
		return nil
	}
	shown := name
	if len(shown) > 64 {
		shown = shown[:64] + "…"
	}
	return fmt.Errorf("%w: %w", ErrBadQuery, aerr.Invalid("row index name %s %s: %s", strconv.Quote(shown), bad, NameRule))
}

// Validate checks the definition.
func (d *Definition) Validate() error {
	if err := ValidateName(d.Name); err != nil {
		return err
	}
	if d.Key == "" {
		return badQuery("row index %s: no key column", d.Name)
	}
	switch d.Kind {
	case "":
		d.Kind = KindHash
	case KindHash, KindSorted:
	default:
		return badQuery("row index %s: unknown kind %q (hash, sorted)", d.Name, d.Kind)
	}
	for _, a := range d.Aggregates {
		if err := a.validate(); err != nil {
			return err
		}
	}
	return nil
}

// FileEntry is one indexed data file.
type FileEntry struct {
	ID   int32  `json:"id"`
	URI  string `json:"uri"`
	Size int64  `json:"size"`
	ETag string `json:"etag,omitempty"`
	// FooterCRC is the CRC-32C of the Parquet footer; a different footer at
	// lookup time means the file was replaced.
	FooterCRC uint32 `json:"footerCrc"`
	Rows      int64  `json:"rows"`
	// RowGroupStarts is the first row (in the file) of each row group.
	RowGroupStarts []int64 `json:"rowGroupStarts"`
	// ScannedPages are the page locations of the chunks that have no page
	// index (empty for files written with one), so that lookups never scan
	// page headers.
	ScannedPages []ChunkPages `json:"scannedPages,omitempty"`
	// TailBytes is the length of the file's page index and footer, read in
	// one request by a cold lookup (0: unknown, read 64 KiB and what is
	// missing after).
	TailBytes int64 `json:"tailBytes,omitempty"`
	// TailRanges, when set, are the only parts of the tail a lookup needs
	// (offset indexes, frame table, footer), ranges sorted by offset with
	// the footer in the last: a cold lookup fetches them as parallel ranged
	// reads instead of TailBytes in one. Recorded only when the tail holds
	// a gap of unneeded bytes larger than tailGapBytes — parquet-go writes
	// the key's bloom filters between the offset indexes and the footer,
	// ≈1.3 MB per file on a prepared day of the skewed lake against ≈10 KB
	// needed. Added in format 2 without a version bump: older builds ignore
	// the field and read TailBytes; manifests without it read as before.
	TailRanges []TailRange `json:"tailRanges,omitempty"`
	// Blocks marks a file whose stored rows each hold several rows (a
	// co-grouped blob, or nested co-grouped lists): a lookup of the key
	// alone, which the index could answer from its entries (one per stored
	// row), reads the file to count the rows. Added without a version
	// bump; indexes built before it answer such lookups a row per stored
	// row.
	Blocks bool `json:"blocks,omitempty"`
	// DictBytes estimates the file's dictionary pages decompressed: each
	// chunk's dictionary page as stored (before its first data page),
	// scaled by the chunk's compression ratio (the footer gives no page's
	// own size). Lookups cache the dictionaries they decode, and on files
	// written with pyarrow's defaults these are most of what they cache
	// (≈75 % of the stored file), so AutoCacheBytes counts them. Added
	// without a version bump (older builds ignore it; 0: unknown).
	DictBytes int64 `json:"dictBytes,omitempty"`
}

// TailRange is one byte range of a data file's tail (FileEntry.TailRanges).
type TailRange struct {
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
}

// Group is one row group of a fragment: the key directory entry that makes
// a bucket (or a key range) one ranged read.
type Group struct {
	BucketLo int32  `json:"bucketLo"`
	BucketHi int32  `json:"bucketHi"`
	KeyLo    []byte `json:"keyLo,omitempty"` // sorted kind only
	KeyHi    []byte `json:"keyHi,omitempty"`
	Offset   int64  `json:"offset"`
	Length   int64  `json:"length"`
	Rows     int64  `json:"rows"`
}

// FragmentEntry is one immutable fragment file.
type FragmentEntry struct {
	Path    string  `json:"path"` // relative to the row index folder
	Size    int64   `json:"size"`
	Entries int64   `json:"entries"`
	Groups  []Group `json:"groups"`
	// TailBytes is the length of the fragment's page index and footer (see
	// FileEntry.TailBytes).
	TailBytes int64 `json:"tailBytes,omitempty"`
}

// Manifest is one version of a row index.
type Manifest struct {
	FormatVersion int   `json:"formatVersion"`
	Version       int64 `json:"version"`
	Definition
	KeyClass KeyClass `json:"keyClass,omitempty"`
	// BucketHash is the hash of a hash row index's buckets: set by Create,
	// kept by every later version (fragments of one index must agree).
	// Absent (BucketFNV1a) in hash indexes of formats 1 and 2 and in
	// sorted ones.
	BucketHash BucketHash      `json:"bucketHash,omitempty"`
	Files      []FileEntry     `json:"files"`
	Fragments  []FragmentEntry `json:"fragments"`
	// Dropped marks the tombstone Drop commits (format 4): the row index
	// does not exist; a Create after it commits the next version.
	Dropped bool `json:"dropped,omitempty"`
	// CreatedAt is the version a Create of this row index committed, when
	// above 1 (a Create after a Drop; format 4): an Update that loaded an
	// earlier incarnation must not rebase its files onto this one (their
	// fragments were deleted by the Drop).
	CreatedAt int64 `json:"createdAt,omitempty"`
	// NextFileID is the id the next indexed data file gets. It only grows,
	// so a file id is never reused, not even after the file was removed.
	NextFileID int32 `json:"nextFileId"`
	// Removed are the tombstones: ids of data files removed from the index
	// (Remove) whose entries fragments may still hold. Lookups skip those
	// entries; Compact drops them and forgets the tombstones. Absent in
	// manifests written before removal existed, which load as "none".
	Removed []int32 `json:"removed,omitempty"`
	// Skipped are the tracked data files a build could not index because
	// a column of the definition is missing or unusable in them (a file
	// without the key column): the other files are indexed, these are
	// listed with the reason (describe, update) and not tried again until
	// they leave the index (delete-files) and come back.
	Skipped   []SkippedFile `json:"skipped,omitempty"`
	Committed time.Time     `json:"committed"`
}

// SkippedFile is a data file a build left out, with the reason.
type SkippedFile struct {
	URI    string `json:"uri"`
	Reason string `json:"reason"`
}

// IndexBytes returns the total size of the fragments.
func (m *Manifest) IndexBytes() int64 {
	var n int64
	for _, f := range m.Fragments {
		n += f.Size
	}
	return n
}

// DataBytes returns the total size of the indexed files.
func (m *Manifest) DataBytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Entries returns the number of entries of all fragments.
func (m *Manifest) Entries() int64 {
	var n int64
	for _, f := range m.Fragments {
		n += f.Entries
	}
	return n
}

func (m *Manifest) clone() *Manifest {
	c := *m
	c.Files = append([]FileEntry(nil), m.Files...)
	c.Fragments = append([]FragmentEntry(nil), m.Fragments...)
	c.Removed = append([]int32(nil), m.Removed...)
	c.Skipped = append([]SkippedFile(nil), m.Skipped...)
	c.Cover = append([]string(nil), m.Cover...)
	c.Aggregates = append([]Aggregate(nil), m.Aggregates...)
	return &c
}

func folderOf(name string) string    { return Folder + "/" + name + "/" }
func manifestDir(name string) string { return folderOf(name) + "_manifest/" }
func manifestKey(name string, v int64) string {
	return fmt.Sprintf("%s%020d.json", manifestDir(name), v)
}

// latestCopyKey is a copy of the newest manifest, overwritten after each
// commit (best effort): a reader reads it in the round that lists the log
// and uses it when its version is the newest listed, so that opening a
// handle costs one round trip, not two. The listing stays the authority: a
// copy behind it (a racing commit's, or one whose write failed) is ignored
// and the listed version read. Older builds skip it (not a number).
func latestCopyKey(name string) string { return manifestDir(name) + "latest.json" }

// latestVersion lists the manifest log of a row index and returns its
// newest version, or 0 when there is none.
func latestVersion(ctx context.Context, st store.Store, name string, m *meter) (int64, error) {
	m.requests.Add(1)
	var latest int64
	for info, err := range st.List(ctx, store.ListOptions{Prefix: manifestDir(name)}) {
		if err != nil {
			return 0, err
		}
		base := path.Base(info.Key)
		v, err := strconv.ParseInt(strings.TrimSuffix(base, ".json"), 10, 64)
		if err != nil || !strings.HasSuffix(base, ".json") {
			continue // temporary or foreign objects
		}
		latest = max(latest, v)
	}
	return latest, nil
}

// loadManifest reads the newest manifest of a row index: ErrNotFound when
// there is none or it is Drop's tombstone.
func loadManifest(ctx context.Context, st store.Store, name string, m *meter) (*Manifest, error) {
	man, err := newestManifest(ctx, st, name, m)
	if err != nil {
		return nil, err
	}
	if man == nil || man.Dropped {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	return man, nil
}

// newestManifest reads the newest manifest of a row index, a tombstone
// included; nil when the log is empty.
func newestManifest(ctx context.Context, st store.Store, name string, m *meter) (*Manifest, error) {
	return newestVersion(ctx, st, name, m, decodeManifest)
}

// newestVersion reads the newest manifest of a row index with decode (the
// whole manifest, or its head); nil when the log is empty.
func newestVersion[T any](ctx context.Context, st store.Store, name string, m *meter, decode func([]byte, string, int64) (*T, error)) (*T, error) {
	var latest []byte // the copy of the newest manifest, read while listing
	var wg sync.WaitGroup
	wg.Go(func() {
		m.requests.Add(1)
		if b, err := store.ReadAll(ctx, st, latestCopyKey(name)); err == nil {
			m.bytes.Add(int64(len(b)))
			latest = b
		}
	})
	v, err := latestVersion(ctx, st, name, m)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if v == 0 {
		return nil, nil
	}
	if latest != nil {
		if man, err := decode(latest, name, v); err == nil {
			return man, nil
		}
		// Behind the log, or damaged: the listed version is read.
	}
	m.requests.Add(1)
	b, err := store.ReadAll(ctx, st, manifestKey(name, v))
	if err != nil {
		return nil, err
	}
	m.bytes.Add(int64(len(b)))
	return decode(b, name, v)
}

// decodeManifest decodes b as version v of row index name's manifest.
func decodeManifest(b []byte, name string, v int64) (*Manifest, error) {
	var man Manifest
	// segmentio's decoder: a fresh handle's manifest (every file's scanned
	// page locations and every fragment's groups: 630 KB for the 1 GB
	// lake) decoded by encoding/json took 12.5 ms, ≈80 % of a fresh
	// handle's first lookup; this one takes 2.7 ms, to the same values.
	if err := fastjson.Unmarshal(b, &man); err != nil {
		return nil, corrupt("manifest %d of %s: %v", v, name, err)
	}
	if err := checkManifestHead(name, v, man.FormatVersion, man.Version, man.BucketHash); err != nil {
		return nil, err
	}
	return &man, nil
}

// manifestHead is what List needs of a manifest: its definition, and what
// says the manifest is readable.
type manifestHead struct {
	FormatVersion int   `json:"formatVersion"`
	Version       int64 `json:"version"`
	Definition
	BucketHash BucketHash `json:"bucketHash,omitempty"`
	Dropped    bool       `json:"dropped,omitempty"`
}

// decodeManifestHead decodes the head of version v of row index name's
// manifest, checked as decodeManifest checks it. The files and fragments
// are skipped, not decoded: on the pyarrow lake's 500 KB manifest 0.9 ms
// against 2.1 ms for the whole (a listing whose row index is opened next
// reads the whole once instead: ListManifests).
func decodeManifestHead(b []byte, name string, v int64) (*manifestHead, error) {
	var h manifestHead
	if err := fastjson.Unmarshal(b, &h); err != nil {
		return nil, corrupt("manifest %d of %s: %v", v, name, err)
	}
	if err := checkManifestHead(name, v, h.FormatVersion, h.Version, h.BucketHash); err != nil {
		return nil, err
	}
	return &h, nil
}

// checkManifestHead checks what every reader of version v of row index
// name's manifest relies on: a format this build reads, the version it is
// stored as, a known bucket hash.
func checkManifestHead(name string, v int64, format int, version int64, hash BucketHash) error {
	if format > FormatVersion {
		return corrupt("manifest of %s has format version %d, this build reads up to %d", name, format, FormatVersion)
	}
	if version != v {
		return corrupt("manifest %d of %s claims version %d", v, name, version)
	}
	if !hash.known() {
		return corrupt("manifest %d of %s has unknown bucket hash %q", v, name, hash)
	}
	return nil
}

// commitManifest writes man as the next version after man.Version-1 with
// put-if-absent: exactly one of several racing writers wins, the others get
// ErrConcurrentUpdate.
func commitManifest(ctx context.Context, st store.Store, man *Manifest) error {
	man.FormatVersion = formatNeeded(man)
	man.Committed = time.Now().UTC()
	b, err := json.Marshal(man) // compact: thousands of key directory entries
	if err != nil {
		return err
	}
	err = store.WriteAll(ctx, st, manifestKey(man.Name, man.Version), b, &store.WriteOptions{IfNotExist: true, ContentType: "application/json"})
	if errors.Is(err, store.ErrPrecondition) {
		return fmt.Errorf("%w: version %d of %s", ErrConcurrentUpdate, man.Version, man.Name)
	}
	if err != nil {
		return err
	}
	// The copy readers take in the listing's round. Its failure loses
	// nothing: readers then read the version listed.
	_ = store.WriteAll(ctx, st, latestCopyKey(man.Name), b, &store.WriteOptions{ContentType: "application/json"})
	return nil
}

// formatNeeded is the lowest format version that describes man: 4 for a
// tombstone, 3 with the mixed bucket hash, else 2 (the fragments a build
// writes are version 2).
func formatNeeded(man *Manifest) int {
	if man.Dropped || man.CreatedAt > 1 {
		return 4
	}
	if man.BucketHash != BucketFNV1a {
		return 3
	}
	return 2
}

// List returns the definitions of every row index under the index folder
// idx, by name. It decodes only the manifests' heads.
func List(ctx context.Context, idx store.Store) ([]Definition, error) {
	heads, err := listNewest(ctx, idx, decodeManifestHead)
	if err != nil {
		return nil, err
	}
	defs := make([]Definition, 0, len(heads))
	for _, h := range heads {
		if h.v != nil && !h.v.Dropped {
			defs = append(defs, h.v.Definition)
		}
	}
	return defs, nil
}

// ListManifests returns the newest manifest of every row index under the
// index folder idx, by the row index's name (its folder's), dropped ones
// left out: what List gives, with what OpenManifest needs to open a handle
// without reading the manifest again (a fresh process that lists and then
// looks up reads it once, in one round).
func ListManifests(ctx context.Context, idx store.Store) (map[string]*Manifest, error) {
	mans, err := listNewest(ctx, idx, decodeManifest)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Manifest, len(mans))
	for _, m := range mans {
		if m.v != nil && !m.v.Dropped {
			out[m.name] = m.v
		}
	}
	return out, nil
}

// named is a row index's newest manifest (or its head) and its name; v is
// nil when its log is empty.
type named[T any] struct {
	name string
	v    *T
}

// listNewest reads the newest manifest of every row index under idx with
// decode, in name order, the row indexes in parallel (a few at a time).
func listNewest[T any](ctx context.Context, idx store.Store, decode func([]byte, string, int64) (*T, error)) ([]named[T], error) {
	var out []named[T]
	for info, err := range idx.List(ctx, store.ListOptions{Prefix: Folder + "/", Delimiter: "/"}) {
		if err != nil {
			return nil, err
		}
		if info.IsDir {
			out = append(out, named[T]{name: path.Base(strings.TrimSuffix(info.Key, "/"))})
		}
	}
	errs := make([]error, len(out))
	eachOnWorkers(len(out), listReads, func(i int) {
		out[i].v, errs[i] = newestVersion(ctx, idx, out[i].name, new(meter), decode)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err // the first by name
		}
	}
	return out, nil
}

// listReads bounds the manifests List and ListManifests read at once.
const listReads = 8

// Drop deletes a row index. It first commits a tombstone as the next
// version (so readers stop seeing the index, and a writer that loaded an
// older version loses its commit with ErrConcurrentUpdate instead of
// reviving the index), then deletes the older manifests and the fragments.
// The tombstone stays: a later Create of the name commits the version after
// it. No data file is touched.
func Drop(ctx context.Context, idx store.Store, name string) error {
	m := new(meter)
	var err error
	for attempt := 1; attempt <= commitAttempts; attempt++ {
		var cur *Manifest
		if cur, err = loadManifest(ctx, idx, name, m); err != nil {
			return err
		}
		tomb := &Manifest{Version: cur.Version + 1, Definition: Definition{Name: name}, Dropped: true}
		if err = commitManifest(ctx, idx, tomb); errors.Is(err, ErrConcurrentUpdate) {
			continue // another writer committed first: drop its version
		}
		if err != nil {
			return err
		}
		return deleteBelow(ctx, idx, name, tomb.Version)
	}
	return err
}

// deleteBelow deletes every object of row index name but its manifests from
// version keep on: the log's older versions first (they stop being
// readable), then the fragments and anything else under the folder.
func deleteBelow(ctx context.Context, idx store.Store, name string, keep int64) error {
	var manifests, rest []string
	for info, err := range idx.List(ctx, store.ListOptions{Prefix: folderOf(name)}) {
		if err != nil {
			return err
		}
		switch v, ok := manifestVersion(name, info.Key); {
		case ok && v >= keep:
		case ok:
			manifests = append(manifests, info.Key)
		default:
			rest = append(rest, info.Key)
		}
	}
	for _, k := range append(manifests, rest...) {
		if err := idx.Delete(ctx, k, nil); err != nil && !errors.Is(err, store.ErrNotExist) {
			return err
		}
	}
	return nil
}

// manifestVersion returns the version of key if it is a manifest of row
// index name.
func manifestVersion(name, key string) (int64, bool) {
	base, ok := strings.CutPrefix(key, manifestDir(name))
	if !ok || strings.Contains(base, "/") || !strings.HasSuffix(base, ".json") {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSuffix(base, ".json"), 10, 64)
	return v, err == nil
}
