package prepared

import (
	"encoding/json"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/ariadne-go/ariadne/aerr"
)

// FormatVersion is the version of the layout recorded in the marker. Readers
// of the marker refuse nothing (a prepared file is plain Parquet); the
// version tells tools which promises the file keeps.
const FormatVersion = 1

// MarkerKey is the key of the key-value metadata entry that marks a
// prepared file; its value is a Marker as JSON.
const MarkerKey = "ariadne.prepared"

const (
	// DefaultRowGroupRows caps row groups (cut at key boundaries only).
	// 1 Mi rows of the 40-byte listening rows is ≈40 MB compressed: large
	// enough that per-row-group overhead (footer metadata, one bloom filter
	// per row group) is negligible, small enough that a reader streaming the
	// file holds one row group comfortably.
	DefaultRowGroupRows = 1 << 20

	// DefaultMemoryBytes is the default sort budget: a day of the 1 GB
	// benchmark lake is ≈900k rows × ≈400 bytes in memory (5 values of 32
	// bytes plus ≈240 bytes of strings) ≈ 360 MB, so 2 GiB leaves room for
	// partitions 5× larger.
	DefaultMemoryBytes = 2 << 30

	// maxPageBytes bounds PageBytes: parquet-go keeps the page buffer size
	// in an int32 and we give it 4× the target (see pageBufferSize).
	maxPageBytes = 256 << 20

	// bloomBitsPerValue sizes the key's split-block bloom filter: 10 bits per
	// distinct value gives ≈1% false positives.
	bloomBitsPerValue = 10
)

// Options configure the prepared writer. The zero value is not valid: Key
// is required.
type Options struct {
	// Key is the key column: a top-level, non-repeated primitive column
	// (optional allowed: null keys sort first and form one group).
	Key string
	// Sort lists further top-level primitive columns that order the rows of
	// one key (for example a timestamp), ascending, nulls first.
	Sort []string
	// Buckets is the number of hash buckets of PrepareFiles: a row goes to
	// file pmod(murmur3(key, 42), Buckets) of its partition, as Spark's
	// bucketBy(Buckets, key). 0 or 1: one file per partition. Write ignores
	// it (it writes one file) but records it in the marker.
	Buckets int
	// Bucket is the bucket id that Write records in the marker of a file of
	// a bucketed set (Buckets > 1); PrepareFiles sets it per file.
	Bucket int
	// PageBytes is the target size of a data page in uncompressed value
	// bytes. Whole keys are packed into a page while they fit; a key larger
	// than PageBytes gets pages of its own, split at row boundaries. 0 means
	// one page per key.
	PageBytes int
	// RowGroupRows caps the rows of a row group (DefaultRowGroupRows if 0);
	// row groups end at key boundaries, so one key larger than the cap
	// makes a larger row group.
	RowGroupRows int64
	// Compression is the page codec (ZSTD if nil).
	Compression compress.Codec
	// MemoryBytes is the sort budget: the estimated in-memory size of the
	// rows held at once (one file for Write, one partition for
	// PrepareFiles). DefaultMemoryBytes if 0.
	MemoryBytes int64
	// Overwrite replaces existing files; by default a file is written with
	// put-if-absent and an existing one is an error (store.ErrPrecondition).
	Overwrite bool
	// Progress, if not nil, is called as work advances (from the calling
	// goroutine).
	Progress func(Progress)
}

// Progress reports the advance of PrepareFiles or Write.
type Progress struct {
	Phase       string // "read" (sources read) or "write" (files written)
	Done, Total int    // files of the phase
	Rows        int64  // rows read or written so far
	Bytes       int64  // bytes read (read) or written (write) so far
}

// Marker is the JSON recorded under MarkerKey in every prepared file.
type Marker struct {
	FormatVersion int      `json:"formatVersion"`
	Key           string   `json:"key"`
	Sort          []string `json:"sort,omitempty"`
	Buckets       int      `json:"buckets,omitempty"`
	// Bucket is this file's bucket (-1 when the file is not bucketed).
	Bucket int `json:"bucket"`
	// Pages is the page policy: "key" (one page per key) or "packed"
	// (whole keys up to PageBytes per page).
	Pages     string `json:"pages"`
	PageBytes int    `json:"pageBytes,omitempty"`
}

// MarkerOf returns the marker of a prepared file, and false for a file that
// carries none.
func MarkerOf(f *parquet.File) (Marker, bool, error) {
	v, ok := f.Lookup(MarkerKey)
	if !ok {
		return Marker{}, false, nil
	}
	var m Marker
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return Marker{}, true, aerr.Wrap(aerr.ErrInvalidArgument, err, "prepared: bad %s marker", MarkerKey)
	}
	return m, true, nil
}

func (o Options) marker(bucket int) Marker {
	m := Marker{FormatVersion: FormatVersion, Key: o.Key, Sort: o.Sort, Buckets: o.Buckets, Bucket: bucket, Pages: "key"}
	if o.Buckets <= 1 {
		m.Buckets, m.Bucket = 0, -1
	}
	if o.PageBytes > 0 {
		m.Pages, m.PageBytes = "packed", o.PageBytes
	}
	return m
}

// withDefaults validates the options that do not depend on a schema and
// fills in defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Key == "" {
		return o, aerr.Invalid("prepared: no key column")
	}
	if o.PageBytes < 0 || o.PageBytes > maxPageBytes {
		return o, aerr.Invalid("prepared: page bytes %d out of [0, %d]", o.PageBytes, maxPageBytes)
	}
	if o.Buckets < 0 || o.RowGroupRows < 0 || o.MemoryBytes < 0 {
		return o, aerr.Invalid("prepared: negative buckets, row group rows or memory bytes")
	}
	if o.Buckets > 1 && (o.Bucket < 0 || o.Bucket >= o.Buckets) {
		return o, aerr.Invalid("prepared: bucket %d out of [0, %d)", o.Bucket, o.Buckets)
	}
	seen := map[string]bool{o.Key: true}
	for _, c := range o.Sort {
		if seen[c] {
			return o, aerr.Invalid("prepared: column %q repeated in key and sort columns", c)
		}
		seen[c] = true
	}
	o.Sort = slices.Clone(o.Sort)
	if o.RowGroupRows == 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	if o.MemoryBytes == 0 {
		o.MemoryBytes = DefaultMemoryBytes
	}
	if o.Compression == nil {
		o.Compression = &parquet.Zstd
	}
	return o, nil
}
