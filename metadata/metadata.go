// Package metadata owns an index's metadata.json (spec §4.6–§4.8): the record
// that names an index's format, schema and index definitions, its load rules
// (Parse), its Gson-compatible rendering (Marshal), the version markers and
// their declared-version validation, the column sets the index registry
// derives from the record, and its atomic replace on object storage (Load,
// Store).
//
// The package never interprets the schema string or the SQL expressions; it
// keeps them byte for byte so that schema equality stays an exact string
// comparison (§4.6) and a record moves unchanged between this port and the
// Spark library.
package metadata

import "slices"

// Version markers of this build (§4.7, §4.8).
const (
	// CurrentMetadataVersion is the version of the additive field set: v1
	// added indexes, ..., v10 added batches_since_compact (§4.7).
	CurrentMetadataVersion = 10
	// CurrentStorageFormatVersion is the version of the physical layout:
	// 1 = alpha37 baseline, 2 = non-null file_size, 3 = exploded columns and
	// large-index directories under as_column names (§4.8).
	CurrentStorageFormatVersion = 3
	// BaselineStorageFormatVersion is the storage version an absent
	// storage_format_version declares (the alpha37 baseline).
	BaselineStorageFormatVersion = 1
)

// Defaults taken by absent scalar fields (§4.6).
const (
	// UnknownTotalIndexedFileSize is total_indexed_file_size when absent.
	UnknownTotalIndexedFileSize int64 = -1
)

// Metadata is the content of one index's metadata.json (§4.6), in the order
// the fields are written.
//
// A record returned by Parse, Load or NewMetadata has every collection
// non-nil; the version markers are nil when absent from the file, which the
// migration preflight distinguishes from any value. A Metadata is a plain
// value: it is not safe for concurrent mutation; use Clone to hand a copy to
// another goroutine.
type Metadata struct {
	// Format is the data file format: "csv", "parquet" or "json" (other
	// values are kept and fail when files are read). Required.
	Format string
	// Schema is the Spark schema as compact JSON, compared byte for byte.
	// Required.
	Schema string
	// Indexes are the regular index columns (§3.2).
	Indexes []string
	// ComputedIndexes maps computed index names to SQL expressions, in the
	// order they are applied on read (§3.3).
	ComputedIndexes StringMap
	// ExplodedFieldIndexes are the exploded field mappings (§3.4).
	ExplodedFieldIndexes []ExplodedFieldIndex
	// BloomIndexes are the bloom filter indexes (§3.5).
	BloomIndexes []BloomIndex
	// TemporalIndexes are the temporal indexes (§3.7).
	TemporalIndexes []TemporalIndex
	// ReadOptions are the reader options (e.g. header=true), in file order.
	ReadOptions StringMap
	// RangeIndexes are the min/max indexes (§3.6).
	RangeIndexes []RangeIndex
	// AutoBloomIndexes are the columns detected as large (§3.9).
	AutoBloomIndexes []string
	// TotalIndexedFileSize is the sum of indexed file sizes in bytes, or
	// UnknownTotalIndexedFileSize (−1).
	TotalIndexedFileSize int64
	// BatchesSinceCompact counts update batches since the last compaction
	// (§5.3.8).
	BatchesSinceCompact int
	// MetadataVersion is metadata_version, nil when absent (pre-versioning).
	MetadataVersion *int
	// StorageFormatVersion is storage_format_version, nil when absent
	// (declares BaselineStorageFormatVersion).
	StorageFormatVersion *int
}

// ExplodedFieldIndex indexes field FieldPath of the elements of array column
// ArrayColumn under the name AsColumn (§3.4). A field absent from the file
// loads as "".
type ExplodedFieldIndex struct {
	ArrayColumn string // array_column, may be a dotted path
	FieldPath   string // field_path, may be a dotted path
	AsColumn    string // as_column, the index column and storage column
}

// BloomIndex is a bloom filter index on Column with false-positive rate FPR
// (§3.5). An entry without fpr loads with FPR 0 (the constructor's (0,1)
// validation is bypassed on load, as in the original, §9 item 21) and fails
// when the filter is built.
type BloomIndex struct {
	Column string  // column
	FPR    float64 // fpr
}

// TemporalIndex keeps, per value of Column, the file with the latest
// TimestampColumn (§3.7).
type TemporalIndex struct {
	Column          string // column, the value (key) column
	TimestampColumn string // timestamp_column, may be a dotted path
}

// RangeIndex is a min/max index on Column (§3.6).
type RangeIndex struct {
	Column string // column
}

// NewMetadata returns the record of a new index: the given format and schema,
// no index definitions, the current version markers, an unknown total size
// and no batches since compaction.
func NewMetadata(format, schema string) *Metadata {
	m := &Metadata{Format: format, Schema: schema, TotalIndexedFileSize: UnknownTotalIndexedFileSize}
	m.setDefaults()
	mv, sv := CurrentMetadataVersion, CurrentStorageFormatVersion
	m.MetadataVersion, m.StorageFormatVersion = &mv, &sv
	return m
}

// setDefaults gives every absent (nil) collection its empty value (§4.6 load
// rules). Scalars are defaulted by the caller, which knows whether they were
// present.
func (m *Metadata) setDefaults() {
	if m.Indexes == nil {
		m.Indexes = []string{}
	}
	if m.ExplodedFieldIndexes == nil {
		m.ExplodedFieldIndexes = []ExplodedFieldIndex{}
	}
	if m.BloomIndexes == nil {
		m.BloomIndexes = []BloomIndex{}
	}
	if m.TemporalIndexes == nil {
		m.TemporalIndexes = []TemporalIndex{}
	}
	if m.RangeIndexes == nil {
		m.RangeIndexes = []RangeIndex{}
	}
	if m.AutoBloomIndexes == nil {
		m.AutoBloomIndexes = []string{}
	}
}

// Clone returns a deep copy of m.
func (m *Metadata) Clone() *Metadata {
	c := *m
	c.Indexes = cloneNonNil(m.Indexes)
	c.ComputedIndexes = m.ComputedIndexes.Clone()
	c.ExplodedFieldIndexes = cloneNonNil(m.ExplodedFieldIndexes)
	c.BloomIndexes = cloneNonNil(m.BloomIndexes)
	c.TemporalIndexes = cloneNonNil(m.TemporalIndexes)
	c.ReadOptions = m.ReadOptions.Clone()
	c.RangeIndexes = cloneNonNil(m.RangeIndexes)
	c.AutoBloomIndexes = cloneNonNil(m.AutoBloomIndexes)
	if m.MetadataVersion != nil {
		v := *m.MetadataVersion
		c.MetadataVersion = &v
	}
	if m.StorageFormatVersion != nil {
		v := *m.StorageFormatVersion
		c.StorageFormatVersion = &v
	}
	return &c
}

// cloneNonNil copies s, keeping nil as nil and empty as non-nil empty.
func cloneNonNil[S ~[]E, E any](s S) S {
	if s == nil {
		return nil
	}
	return append(S{}, s...)
}

// SetVersions sets both version markers (the last step of a migration,
// §4.8 step 8).
func (m *Metadata) SetVersions(metadataVersion, storageFormatVersion int) {
	m.MetadataVersion, m.StorageFormatVersion = &metadataVersion, &storageFormatVersion
}

// DeclaredStorageFormatVersion returns storage_format_version, or
// BaselineStorageFormatVersion when it is absent.
func (m *Metadata) DeclaredStorageFormatVersion() int {
	if m.StorageFormatVersion == nil {
		return BaselineStorageFormatVersion
	}
	return *m.StorageFormatVersion
}

// Equal reports whether a and b hold the same values, with nil and empty
// collections equal and map order significant (it is persisted).
func Equal(a, b *Metadata) bool {
	eqInt := func(x, y *int) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Format == b.Format && a.Schema == b.Schema &&
		slices.Equal(a.Indexes, b.Indexes) &&
		a.ComputedIndexes.Equal(b.ComputedIndexes) &&
		slices.Equal(a.ExplodedFieldIndexes, b.ExplodedFieldIndexes) &&
		slices.Equal(a.BloomIndexes, b.BloomIndexes) &&
		slices.Equal(a.TemporalIndexes, b.TemporalIndexes) &&
		a.ReadOptions.Equal(b.ReadOptions) &&
		slices.Equal(a.RangeIndexes, b.RangeIndexes) &&
		slices.Equal(a.AutoBloomIndexes, b.AutoBloomIndexes) &&
		a.TotalIndexedFileSize == b.TotalIndexedFileSize &&
		a.BatchesSinceCompact == b.BatchesSinceCompact &&
		eqInt(a.MetadataVersion, b.MetadataVersion) &&
		eqInt(a.StorageFormatVersion, b.StorageFormatVersion)
}
