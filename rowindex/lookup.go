package rowindex

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
)

// Query is one lookup.
type Query struct {
	// KeyColumn, if set, must name the row index's key column (as the
	// command line's --key COL=... does).
	KeyColumn string
	// Key selects the rows whose key equals it (see EncodeKey for the Go
	// types accepted). Exactly one of Key, KeyText, or a range (Low/High or
	// LowText/HighText, sorted row indexes only) must be set.
	Key any
	// KeyText is Key in text form, parsed by the key column's class
	// (ParseKey), as given on a command line.
	KeyText string
	// Low and High bound a range query, inclusive; a nil bound is open.
	Low, High any
	// LowText and HighText are Low and High in text form ("" is open).
	LowText, HighText string
	// Range marks a range query (needed when both bounds are open).
	Range bool

	// Columns are the top-level columns returned (nil: all of them). If
	// every one is a cover column the lookup reads no data file.
	Columns []string
	// Where filters rows on cover columns before any data read.
	Where []Filter
	// NoRows returns aggregates only (no row is read, from the index or the
	// data).
	NoRows bool
	// Limit caps the rows returned (0: no limit); Cursor continues after the
	// last row of a previous page (Result.Cursor).
	Limit  int
	Cursor string
}

// ParseKeyFlag parses the command line's --key argument, COL=VALUE or
// COL=LOW..HIGH (either bound may be empty), into the key fields of a
// Query.
func ParseKeyFlag(s string) (Query, error) {
	col, v, ok := strings.Cut(s, "=")
	if !ok || col == "" {
		return Query{}, badQuery("--key wants COL=VALUE or COL=LOW..HIGH, got %q", s)
	}
	if lo, hi, isRange := strings.Cut(v, ".."); isRange {
		return Query{KeyColumn: col, LowText: lo, HighText: hi, Range: true}, nil
	}
	return Query{KeyColumn: col, KeyText: v}, nil
}

// Filter is a comparison of a cover column with a value.
type Filter struct {
	Column string
	Op     string // =, !=, <, <=, >, >=
	Value  any
}

// Row is one returned row.
type Row struct {
	// Key is the row's key (bool, int64, float64 or string).
	Key any
	// File is the data file's URI, RowGroup its row group and Row its row
	// number in the file (0-based).
	File     string
	RowGroup int
	Row      int64
	// Values holds the leaf values of the requested columns, in column
	// order, when the row was read from the data file.
	Values parquet.Row
	// Covered holds the values of Result.Columns when the row was served
	// from cover columns (no data read).
	Covered []any

	file *parquet.File // the data file's schema, for Record
	// block is, for a stored row of co-grouped blocks, the rows it holds
	// (readPieces returns them in its place).
	block []Row
	// blk is, for a row of a co-grouped block, the stored row holding it,
	// and bi the row's place in the block: a limit may cut a block, and
	// the cursor then continues inside it.
	blk *blockPos
	bi  int64
}

// blockPos is a stored row of co-grouped blocks: its position and how many
// rows its block holds.
type blockPos struct {
	pos cursor
	n   int64
}

// KeyAggregates is the aggregates of one key.
type KeyAggregates struct {
	Key any `json:"key"`
	// Values maps the aggregate's name ("count", "sum:duration_ms",
	// "count-by:kind") to its value: int64 or float64 for count and sum, the
	// column's value for min and max, map[string]int64 for count-by.
	Values map[string]any `json:"values"`
}

// Result is a lookup's answer.
type Result struct {
	Columns    []string
	Rows       []Row
	Aggregates []KeyAggregates
	// Cursor continues after the last row ("" when no row is left).
	Cursor string
	Plan   Plan
}

// Cost counts the storage work of part of a lookup.
type Cost struct {
	Requests  int64 // storage requests (list, reads)
	BytesRead int64
	CacheHits int64
	// Misses are reads that fell through the prefetched ranges during
	// decoding (zero on the normal path).
	Misses, MissBytes int64
	// Pages is the data pages decoded; PageHits the pages served decoded
	// from the page cache instead.
	Pages, PageHits int64
	// Frames is the ZSTD frames of framed prepared files decoded alone
	// (each also counted in Pages): the lookup read frames, not pages.
	Frames int64
}

func (m *meter) cost() Cost {
	return Cost{
		Requests: m.requests.Load(), BytesRead: m.bytes.Load(), CacheHits: m.hits.Load(),
		Misses: m.misses.Load(), MissBytes: m.missBytes.Load(),
		Pages: m.pages.Load(), PageHits: m.pageHits.Load(), Frames: m.frames.Load(),
	}
}

// Plan explains a lookup: what the index found and what reading it cost.
type Plan struct {
	Kind          Kind
	Entries       int  // index entries (runs) matching the key(s)
	Files         int  // data files read
	RowRanges     int  // row runs read from data files
	ByteRanges    int  // ranges fetched after coalescing
	Rows          int  // rows returned
	Covered       bool // served from the index alone
	Index         Cost // manifest and fragments
	Data          Cost // data files
	BytesReturned int64
	Elapsed       time.Duration
	// The planner's estimates for the data files read (choosePath): the
	// index path's bytes and ranges, a projected scan's (the requested and
	// key columns' chunks of the row groups holding the key), and the files
	// for which the scan was cheaper and was read instead.
	IndexPathBytes, ScanBytes   int64
	IndexPathRanges, ScanRanges int
	ScanFiles                   int
	// Shape files (shapefile.go): the page shapes the lookup read from
	// them, and the shape files or records it found unusable (damaged, or
	// made for other data: their pages were read whole; a handle
	// remembers a damaged directory and does not count it again).
	// DictEntries counts the dictionary entries it read in parts
	// (dictparts.go).
	ShapeRecords, ShapeFilesIgnored int
	// ShapeFileIgnoredReason says why the first of them was passed over
	// (the shape file's name, then the reason).
	ShapeFileIgnoredReason string
	DictEntries            int
	// UnshapedPages counts the reads of whole data pages (and
	// dictionaries), in the files the index path read, that their shapes
	// would have made reads of parts: pages whose shape was unknown and of
	// which the lookup wanted at most half the rows. Shapes come from Warm
	// (within Options.ShapeBytes) or from shape files (SaveShapes); a handle
	// also learns the shape of a page it reads whole (a SNAPPY page's on
	// its second read) in a batch of at most learnMaxPages pages, so the
	// count falls as a handle serves. A page read by two batches counts
	// twice.
	UnshapedPages int
}

// Requests is the total number of storage requests.
func (p Plan) Requests() int64 { return p.Index.Requests + p.Data.Requests }

// BytesRead is the total number of bytes read.
func (p Plan) BytesRead() int64 { return p.Index.BytesRead + p.Data.BytesRead }

// piece is a run of consecutive selected rows of one row group.
type piece struct {
	key   []byte
	file  int32
	rg    int32
	row   int64
	n     int64
	cover [][]any // per row, the cover values (when decoded)
	// raw is the entry's encoded cover values (when not decoded), skip the
	// entry's rows before the piece's first, entryRows the entry's rows.
	raw             []byte
	skip, entryRows int64
	at              int // position of the piece's first row in its batch
}

// cursor is the position of the last row returned. Sub > 0 says the row
// is a stored row of co-grouped blocks of which only the first Sub rows were
// returned (a limit cut its block).
type cursor struct {
	Key  []byte `json:"k"`
	File int32  `json:"f"`
	RG   int32  `json:"g"`
	Row  int64  `json:"r"`
	Sub  int64  `json:"s,omitempty"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (*cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, badQuery("bad cursor")
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Sub < 0 {
		return nil, badQuery("bad cursor")
	}
	return &c, nil
}

// cmpPos orders positions (key, file, rg, row).
func cmpPos(k []byte, f, g int32, r int64, c *cursor) int {
	return cmp.Or(bytes.Compare(k, c.Key), cmp.Compare(f, c.File), cmp.Compare(g, c.RG), cmp.Compare(r, c.Row))
}

// pastCursor reports whether the stored row at (k, f, g, r) has rows not yet
// returned before cursor c: it lies after c, or it is c's stored row and
// c.Sub says its block was cut.
func pastCursor(k []byte, f, g int32, r int64, c *cursor) bool {
	d := cmpPos(k, f, g, r, c)
	return d > 0 || d == 0 && c.Sub > 0
}

// keyBounds returns the encoded [lo, hi] of the query (nil = open) and
// whether it is a range query.
func (q *Query) keyBounds(class KeyClass) (lo, hi []byte, isRange bool, err error) {
	enc := func(v any, text string) ([]byte, error) {
		if v != nil {
			return EncodeKey(v)
		}
		if text != "" {
			return ParseKey(text, class)
		}
		return nil, nil
	}
	if q.Key != nil || q.KeyText != "" {
		k, err := enc(q.Key, q.KeyText)
		return k, k, false, err
	}
	if !q.Range && q.Low == nil && q.High == nil && q.LowText == "" && q.HighText == "" {
		return nil, nil, false, badQuery("no key")
	}
	if lo, err = enc(q.Low, q.LowText); err != nil {
		return nil, nil, false, err
	}
	if hi, err = enc(q.High, q.HighText); err != nil {
		return nil, nil, false, err
	}
	return lo, hi, true, nil
}

// Lookup answers a query: the rows holding the key (or key range), in
// (key, file id, row group, row) order, with the key's aggregates and a
// Plan. An unknown key returns an empty result without reading any data
// file. A data file replaced or truncated since indexing is an error
// matching ErrDataFileChanged; no rows from it are returned.
//
// A handle whose manifest was superseded by a Compact refreshes itself and
// retries once when it finds a fragment gone.
func (ri *RowIndex) Lookup(ctx context.Context, q Query) (*Result, error) {
	res, err := ri.lookup(ctx, q)
	if errors.Is(err, errFragmentGone) {
		if rerr := ri.Refresh(ctx); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		res, err = ri.lookup(ctx, q)
	}
	return res, err
}

func rowInFile(fe *FileEntry, rg int32, row int64) int64 {
	if int(rg) < len(fe.RowGroupStarts) {
		return fe.RowGroupStarts[rg] + row
	}
	return row
}

func slicesSortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func sizeOfValue(v any) int64 {
	if s, ok := v.(string); ok {
		return int64(len(s))
	}
	return 8
}

// normalize brings a filter value to the hoisted value types.
func normalize(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		return int64(x)
	case float32:
		return float64(x)
	case []byte:
		return string(x)
	}
	return v
}

// match applies filters to one row's cover values. Null never matches.
func match(fs []Filter, idx map[string]int, vals []any) (bool, error) {
	for _, f := range fs {
		v := vals[idx[f.Column]]
		if v == nil {
			return false, nil
		}
		c := compareValues(v, normalize(f.Value))
		var ok bool
		switch f.Op {
		case "=", "==":
			ok = c == 0
		case "!=":
			ok = c != 0
		case "<":
			ok = c < 0
		case "<=":
			ok = c <= 0
		case ">":
			ok = c > 0
		case ">=":
			ok = c >= 0
		default:
			return false, badQuery("unknown filter operator %q", f.Op)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}
