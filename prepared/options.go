package prepared

import (
	"encoding/json"
	"maps"
	"runtime"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

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

	// DefaultMemoryBytes is the default memory budget. Past half of it,
	// sorted runs are spilled to a temporary folder and merged (an external
	// sort), so the budget bounds memory, not the input: 1 GiB holds ≈1.3M
	// rows of the benchmark lake (≈400 bytes each in memory) per round of
	// runs, and a laptop has it to spare.
	DefaultMemoryBytes = 1 << 30

	// PageBytesPerKey is the PageBytes of one page per key and column. It is
	// never a default: for keys of a few rows every page costs ≈85 bytes of
	// header and page index plus a ZSTD frame (docs/prepared.md), which
	// made a lake of light users 2.2× to 4.4× larger.
	PageBytesPerKey = -1

	// DefaultPageBytes is the page target of Write when PageBytes is 0 (Write
	// sees no data before writing; PrepareFiles chooses from the data).
	// 32 KiB was size-neutral on the benchmark lake (docs/prepared.md).
	DefaultPageBytes = 32 << 10

	// maxPageBytes bounds PageBytes: parquet-go keeps the page buffer size
	// in an int32 and we give it 4× the target (see pageBufferSize).
	maxPageBytes = 256 << 20

	// DefaultMinFrameBytes is the FrameOptions.MinFrameBytes of `ariadne
	// prepare --frames`: whole keys are grouped into a frame of ≥ 4 KiB of
	// PLAIN values. Measured on the frame benchmark (docs/prepared.md):
	// 1.11× the size of the unframed ZSTD files, while a light key's lookup
	// reads ≈ one such frame per column instead of a page.
	DefaultMinFrameBytes = 4 << 10

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
	// bucketBy(Buckets, key). 1: one file per partition; 0: chosen from
	// the data by PrepareFiles (files of ≈TargetFileBytes). Write ignores
	// it (it writes one file) but records it in the marker.
	Buckets int
	// Bucket is the bucket id that Write records in the marker of a file of
	// a bucketed set (Buckets > 1); PrepareFiles sets it per file.
	Bucket int
	// PageBytes is the target size of a data page in uncompressed value
	// bytes. Whole keys are packed into a page while they fit; a key larger
	// than PageBytes gets pages of its own, split at row boundaries.
	// PageBytesPerKey gives every key its own page in every column. 0:
	// chosen from the data by PrepareFiles (see Choices), DefaultPageBytes
	// for Write.
	PageBytes int
	// RowGroupRows caps the rows of a row group; row groups end at key
	// boundaries, so one key larger than the cap makes a larger row group.
	// 0: chosen from the data by PrepareFiles, DefaultRowGroupRows for
	// Write.
	RowGroupRows int64
	// Compression is the page codec of every column (ZSTD if nil; the
	// sources' codecs are never kept).
	Compression compress.Codec
	// Encodings sets the encoding of columns by dotted leaf path
	// ("user_id", "context.id"): &parquet.Plain, &parquet.RLEDictionary,
	// &parquet.DeltaLengthByteArray... PrepareFiles chooses the others from
	// the data (a dictionary only where it is small); Write keeps the
	// schema's encoding for them, except a source's dictionary.
	Encodings map[string]encoding.Encoding
	// MemoryBytes is the sort budget: the rows held at once take at most
	// half of it (estimated in-memory size); past that, sorted runs are
	// spilled to TempDir and merged into the writer. DefaultMemoryBytes if
	// 0.
	MemoryBytes int64
	// TempDir is the local folder for spilled runs (os.TempDir() if ""); a
	// folder of its own is made in it at the first spill and removed at
	// the end, also on errors.
	TempDir string
	// Parallelism is the number of sources read, runs sorted and spilled,
	// and bucket files written at once (GOMAXPROCS if 0).
	Parallelism int
	// Overwrite replaces existing files; by default a file is written with
	// put-if-absent and an existing one is an error (store.ErrPrecondition).
	Overwrite bool
	// Progress, if not nil, is called as work advances (from the calling
	// goroutine).
	Progress func(Progress)
	// Frames, if not nil, makes PrepareFiles write framed files (see
	// FrameFile): every column PLAIN, each data page's values a ZSTD frame
	// per run of whole keys, with a frame table the row index reads so a
	// lookup decompresses only its key's frames. Each bucket file is
	// written PLAIN and uncompressed to a folder under TempDir, then framed
	// into the output streaming from that file. Compression must be nil or
	// ZSTD and Encodings PLAIN (the frames are the codec). Write ignores
	// it (use WriteFramed). A MinFrameBytes of DefaultMinFrameBytes is the
	// sensible choice: per-key frames (0) cost ≈10 bytes and their own
	// entropy per key and column.
	Frames *FrameOptions
	// Blob, if not nil, stores the listed columns of every row (and the
	// key) as one BYTE_ARRAY column, so that a row index lookup reads one
	// column chunk per file (see BlobOptions). With Frames the blob column
	// is framed like any other.
	Blob *BlobOptions
	// CoGroup writes nested co-grouped files: one stored row per key per
	// file (per block of ≈64 KiB of values for a heavy key), the key as it
	// is and every other column a LIST of the key's values in row order
	// (see CoGroupKey). Every column must be a top-level primitive; not
	// with Frames or Blob.
	CoGroup bool

	choices     *Choices           // set by PrepareFiles, recorded in the marker
	choseCodec  bool               // Compression was nil
	framing     bool               // written as the intermediate of FrameFile
	blobPlan    *blobPlan          // Blob planned for the resolved columns (PrepareFiles), read-only
	pageBuffers parquet.BufferPool // the writers' page buffers (sorter.finish); nil: in memory
	mergeFanIn  int                // runs merged at once (tests); 0: maxMergeRuns
}

// Progress reports the advance of PrepareFiles or Write.
type Progress struct {
	// Phase is "scan" (first pass: footers and key column, sources
	// done), "read" (sources read), "spill" (sorted runs written) or
	// "write" (files written), or "notice" (Message says it).
	Phase       string
	Done, Total int   // files of the phase
	Rows        int64 // rows read or written so far
	Bytes       int64 // bytes read (read) or written (write) so far
	// Message is set for Phase "notice": what the run found in the output
	// folder and does about it (see Stats.Notice).
	Message string
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

	// Added in the same format version (readers ignore unknown fields):
	// the codec, the rows per row group, the encoding of every leaf column
	// (by dotted path), and, for files of PrepareFiles, the choices made
	// from the data and what they were made from.
	Codec        string            `json:"codec,omitempty"`
	RowGroupRows int64             `json:"rowGroupRows,omitempty"`
	Encodings    map[string]string `json:"encodings,omitempty"`
	Choices      *Choices          `json:"choices,omitempty"`
	// Frames is set on files of PrepareFiles with Options.Frames: the
	// pages' values are ZSTD frames per run of whole keys (Codec is ZSTD),
	// with the frame table under FramesKey.
	Frames *FrameChoice `json:"frames,omitempty"`
	// Blob is set on files with a blob column (Options.Blob; the decoding
	// is described under BlobKey).
	Blob *BlobChoice `json:"blob,omitempty"`
	// CoGroup is set on nested co-grouped files (Options.CoGroup; the
	// expansion is described under CoGroupKey).
	CoGroup *CoGroupChoice `json:"coGroup,omitempty"`
}

// FrameChoice records the framing of a prepared file (Options.Frames).
type FrameChoice struct {
	MinFrameBytes int `json:"minFrameBytes"`
	Align         int `json:"align"`
	Level         int `json:"level,omitempty"`
	// RawBlocks: FrameOptions.RawBlocks.
	RawBlocks bool `json:"rawBlocks,omitempty"`
	// Interleave: FrameOptions.Interleave.
	Interleave []string `json:"interleave,omitempty"`
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

func (o Options) marker(bucket int, cols *columns) Marker {
	m := Marker{FormatVersion: FormatVersion, Key: o.Key, Sort: o.Sort, Buckets: o.Buckets, Bucket: bucket, Pages: "key",
		Codec: o.Compression.CompressionCodec().String(), RowGroupRows: o.RowGroupRows, Encodings: cols.encodingNames()}
	if o.Buckets <= 1 {
		m.Buckets, m.Bucket = 0, -1
	}
	if o.PageBytes > 0 {
		m.Pages, m.PageBytes = "packed", o.PageBytes
	}
	m.Choices = o.choices
	if o.Frames != nil {
		m.Codec = parquet.Zstd.CompressionCodec().String()
		m.Frames = o.Frames.choice()
	}
	m.Blob = o.Blob.choice()
	m.CoGroup = o.coGroupChoice()
	return m
}

// withDefaults validates the options that do not depend on a schema and
// fills in defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Key == "" {
		return o, aerr.Invalid("prepared: no key column")
	}
	if o.PageBytes < PageBytesPerKey || o.PageBytes > maxPageBytes {
		return o, aerr.Invalid("prepared: page bytes %d out of [%d, %d]", o.PageBytes, PageBytesPerKey, maxPageBytes)
	}
	if o.Buckets < 0 || o.RowGroupRows < 0 || o.MemoryBytes < 0 || o.Parallelism < 0 {
		return o, aerr.Invalid("prepared: negative buckets, row group rows, memory bytes or parallelism")
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
	if fo := o.Frames; fo != nil {
		if o.Compression != nil && o.Compression.CompressionCodec() != parquet.Zstd.CompressionCodec() {
			return o, aerr.Invalid("prepared: frames are ZSTD; codec %s cannot be framed", o.Compression.CompressionCodec())
		}
		for col, e := range o.Encodings {
			if e.Encoding() != parquet.Plain.Encoding() {
				return o, aerr.Invalid("prepared: frames need PLAIN values; column %q is set to %s", col, e.Encoding())
			}
		}
		if fo.MinFrameBytes < 0 {
			return o, aerr.Invalid("prepared: negative minimum frame bytes %d", fo.MinFrameBytes)
		}
		if fo.Align != 0 && (fo.Align < 64 || fo.Align&(fo.Align-1) != 0) {
			return o, aerr.Invalid("prepared: frame alignment %d is not a power of two ≥ 64", fo.Align)
		}
		if len(fo.Interleave) > 0 && fo.RawBlocks {
			return o, aerr.Invalid("prepared: raw blocks cannot be interleaved")
		}
		if len(fo.Interleave) > 0 && o.Blob != nil {
			return o, aerr.Invalid("prepared: a blob column cannot be interleaved")
		}
		c := *fo
		c.Interleave = slices.Clone(fo.Interleave)
		o.Frames = &c
	}
	if b := o.Blob; b != nil {
		if b.Column == "" || len(b.Fields) == 0 {
			return o, aerr.Invalid("prepared: a blob column needs a name and at least one field")
		}
		c := *b
		c.Fields = slices.Clone(b.Fields)
		o.Blob = &c
		switch b.Codec {
		case "":
		case BlobCodecZstdDict:
			if b.Keep {
				return o, aerr.Invalid("prepared: a %s blob cannot keep its columns (one stored row per key)", b.Codec)
			}
			if o.Frames == nil {
				// The frame table locates each key's block; the
				// other columns (the key) are framed as by default.
				fo := DefaultFrameOptions()
				o.Frames = &fo
			}
		default:
			return o, aerr.Invalid("prepared: blob codec %q (want %q or %q)", b.Codec, "", BlobCodecZstdDict)
		}
	}
	if o.CoGroup && (o.Frames != nil || o.Blob != nil) {
		return o, aerr.Invalid("prepared: co-grouping as nested lists is not combined with frames or a blob column")
	}
	o.Sort = slices.Clone(o.Sort)
	o.Encodings = maps.Clone(o.Encodings)
	if o.MemoryBytes == 0 {
		o.MemoryBytes = DefaultMemoryBytes
	}
	if o.Compression == nil {
		o.Compression, o.choseCodec = &parquet.Zstd, true
	}
	if o.Parallelism == 0 {
		o.Parallelism = runtime.GOMAXPROCS(0)
	}
	return o, nil
}

// writeDefaults fills in what Write cannot choose from data it has not
// seen yet.
func (o Options) writeDefaults() Options {
	if o.PageBytes == 0 {
		o.PageBytes = DefaultPageBytes
	}
	if o.RowGroupRows == 0 {
		o.RowGroupRows = DefaultRowGroupRows
	}
	return o
}
