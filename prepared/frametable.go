package prepared

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// FramesKey is the key-value metadata entry of a framed file (FrameFile):
// a FramesMarker, JSON, saying where its frame table is.
const FramesKey = "ariadne.frames"

// FramesVersion is the version of the frame table format; FramesVersionRaw
// (written with FrameOptions.RawBlocks) adds raw blocks: a frame's size is
// stored doubled, bit 0 saying whether it is a raw block.
// FramesVersionCompact (files of co-grouped blobs, most of whose frames are
// one stored row) stores a frame of one row and one value without padding
// as one varint, size<<2 | raw<<1 | 1, and any other as size<<2 | raw<<1
// followed by its rows, values and padding: ≈2 bytes a key instead of ≈5.
// FramesVersionValues (co-grouped blobs written since ariadne-block-3) is
// FramesVersionCompact with a flags varint in each page's entry: bit 0
// says the page is DELTA_LENGTH_BYTE_ARRAY and each of its frames is one
// raw value's bytes, without a length (PageFrames.Bare). A bare page's
// frames are then, after their count, the bytes of the page's packed
// lengths (the first frame's padding) and each frame's size alone, one
// varint: ≈1 byte a stored row of up to 127 bytes. FramesVersionCopies
// (files with interleaved column groups, FrameOptions.Interleave) is
// FramesVersionValues with bit 1 of a page's flags saying that each of its
// frames is followed by a copy of the group's values for the frame's rows
// (a skippable frame, FrameCopy): the frame's entry is followed by the
// copy's size, one varint.
const (
	FramesVersion        = 1
	FramesVersionRaw     = 2
	FramesVersionCompact = 3
	FramesVersionValues  = 4
	FramesVersionCopies  = 5
)

// page flags of FramesVersionValues and later.
const (
	pageBare   = 1 << 0
	pageCopies = 1 << 1
)

// framesMagic starts every frame table, so that an offset that points
// elsewhere is found at once.
const framesMagic = "ARFT"

// ErrBadFrames is the class of a frame table that does not describe its
// file: a table that does not parse, or frames that fall outside their page.
// Test with errors.Is; the error is a *FrameTableError.
var ErrBadFrames = errors.New("prepared: bad frame table")

// FrameTableError says what is wrong with a frame table.
type FrameTableError struct{ Reason string }

func (e *FrameTableError) Error() string { return "prepared: bad frame table: " + e.Reason }

// Is makes errors.Is(err, ErrBadFrames) true.
func (e *FrameTableError) Is(target error) bool { return target == ErrBadFrames }

func badFrames(format string, args ...any) error {
	return &FrameTableError{Reason: fmt.Sprintf(format, args...)}
}

// FramesMarker is the JSON under FramesKey. The table lives in the file,
// between the page indexes and the footer, where Parquet readers never
// look (as they never look at bytes the footer does not point to): Offset
// and Length locate it.
type FramesMarker struct {
	Version int   `json:"version"`
	Offset  int64 `json:"offset"`
	Length  int64 `json:"length"`
	// Align is the alignment boundary of the frames (0: none).
	Align int `json:"align,omitempty"`
	// Frames is the number of frames in the file (every column).
	Frames int64 `json:"frames"`
	// Interleave is set on files with an interleaved column group
	// (FrameOptions.Interleave).
	Interleave *InterleaveMarker `json:"interleave,omitempty"`
}

// InterleaveMarker says which columns a framed file interleaves: each
// frame of the Host column (the key) is followed, in its page, by a copy of
// the Columns' values for the frame's rows (FrameCopy), so one byte range
// holds a key's values of every column of the group.
type InterleaveMarker struct {
	Host    string   `json:"host"`
	Columns []string `json:"columns"`
	// Dict is the ZSTD dictionary the copies are compressed with, trained
	// over the file's copies (base64 in the JSON); none: no dictionary.
	Dict []byte `json:"dict,omitempty"`
}

// FramesMarkerOf returns the frames marker of a framed file, and false for
// a file without frames.
func FramesMarkerOf(f *parquet.File) (FramesMarker, bool, error) {
	v, ok := f.Lookup(FramesKey)
	if !ok {
		return FramesMarker{}, false, nil
	}
	var m FramesMarker
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return m, true, badFrames("marker: %v", err)
	}
	if m.Version < FramesVersion || m.Version > FramesVersionCopies {
		return m, true, badFrames("version %d (want %d to %d)", m.Version, FramesVersion, FramesVersionCopies)
	}
	if m.Interleave != nil && (m.Version < FramesVersionCopies || m.Interleave.Host == "" || len(m.Interleave.Columns) == 0) {
		return m, true, badFrames("interleave %+v in a table of version %d", *m.Interleave, m.Version)
	}
	if m.Offset < 4 || m.Length < int64(len(framesMagic)) {
		return m, true, badFrames("table at %d length %d", m.Offset, m.Length)
	}
	return m, true, nil
}

// Frame is one ZSTD frame of a data page: the values of Rows consecutive
// rows of the page (Values of them not null), compressed alone.
type Frame struct {
	// FirstRow is the frame's first row, counted from the page's first.
	FirstRow int
	Rows     int
	Values   int
	// Offset is where the frame starts, in bytes from the page's first byte
	// (its header's); Size its length (0 when all its rows are null: no
	// frame is written for them). For a raw block (Raw) they locate its
	// values, after the block's header (counted as padding): the values are
	// stored as they are, and a reader takes them without decompressing.
	Offset, Size int
	Raw          bool
	// Copy is the size of the skippable frame that follows the frame at
	// Offset+Size in a page with copies (PageFrames.Copies): the group's
	// values of the frame's rows (FrameCopy). 0 elsewhere.
	Copy int
}

// PageHead is the header of the frame table's entry for one data page:
// where the page's levels are and how its frames are stored.
type PageHead struct {
	// LevelsOffset and LevelsLength locate the page's (uncompressed)
	// repetition and definition levels, from the page's first byte.
	LevelsOffset, LevelsLength int
	// Bare says each raw frame of the page is one BYTE_ARRAY value's
	// bytes without its length (a DELTA_LENGTH_BYTE_ARRAY page): a raw
	// frame of one row and one value. Otherwise a raw frame holds PLAIN
	// values.
	Bare bool
	// Copies says each frame is followed by a copy of the interleaved
	// group's values for its rows (Frame.Copy).
	Copies bool
}

// PageFrames is the frame table's entry for one data page.
type PageFrames struct {
	PageHead
	Frames []Frame
}

// FrameTable is a parsed frame table: per row group, column and data page
// (in offset-index order), the page's frames. Pages are decoded on demand
// (Page) from the table's bytes, which stay compact: ≈4 bytes per frame.
type FrameTable struct {
	version int
	raw     []byte
	// pos[rg][col][page] is where the page's entry starts in raw.
	pos [][][]int32
}

// Pages returns the number of data pages the table describes in a chunk.
func (t *FrameTable) Pages(rg, col int) int {
	if rg < 0 || rg >= len(t.pos) || col < 0 || col >= len(t.pos[rg]) {
		return 0
	}
	return len(t.pos[rg][col])
}

// Bytes is the size of the table in memory (for cache accounting).
func (t *FrameTable) Bytes() int64 {
	n := int64(len(t.raw)) + 64
	for _, r := range t.pos {
		for _, c := range r {
			n += int64(4*len(c)) + 24
		}
	}
	return n
}

// Page decodes the frames of one data page.
func (t *FrameTable) Page(rg, col, page int) (PageFrames, error) {
	var p PageFrames
	err := t.PageInto(&p, rg, col, page)
	return p, err
}

// PageInto is Page decoding into *p, reusing the capacity of p.Frames (a
// reader walking many pages allocates their frames once).
func (t *FrameTable) PageInto(p *PageFrames, rg, col, page int) error {
	*p = PageFrames{Frames: p.Frames[:0]}
	var c PageCursor
	if err := t.Cursor(&c, rg, col, page); err != nil {
		return err
	}
	p.PageHead = c.PageHead
	p.Frames = slices.Grow(p.Frames, c.n)
	var f Frame
	for c.Next(&f) {
		p.Frames = append(p.Frames, f)
	}
	return c.Err()
}

// PageCursor walks the frames of one data page in order, decoding each
// from the table's bytes as it is reached: a reader after the frames of a
// few rows stops there, without decoding (or storing) the rest of the
// page's entry. Set it with FrameTable.Cursor.
type PageCursor struct {
	PageHead
	r        tableReader
	version  int
	n, i     int    // frames in the page, frames decoded
	off, row int    // the next frame's offset (before its padding) and first row
	at       [3]int // row group, column and page, for messages
}

// Cursor sets *c at the first frame of a data page, having decoded the
// page entry's header (c.PageHead).
func (t *FrameTable) Cursor(c *PageCursor, rg, col, page int) error {
	*c = PageCursor{version: t.version, at: [3]int{rg, col, page}}
	if page < 0 || page >= t.Pages(rg, col) {
		return badFrames("no entry for row group %d column %d page %d", rg, col, page)
	}
	c.r = tableReader{b: t.raw, at: int(t.pos[rg][col][page])}
	r := &c.r
	head := r.int()
	c.LevelsLength = r.int()
	c.LevelsOffset = head - c.LevelsLength
	if t.version >= FramesVersionValues {
		flags := r.int()
		if flags > pageBare && (t.version < FramesVersionCopies || flags != pageCopies) {
			return badFrames("page entry of row group %d column %d page %d: flags %d", rg, col, page, flags)
		}
		c.Bare, c.Copies = flags&pageBare != 0, flags&pageCopies != 0
	}
	c.n = r.int()
	if r.err != nil || c.LevelsOffset < 0 || c.n > len(t.raw) {
		return badFrames("page entry of row group %d column %d page %d", rg, col, page)
	}
	c.off = head
	return nil
}

// Frames is the number of frames in the page.
func (c *PageCursor) Frames() int { return c.n }

// Next decodes the page's next frame into *f; false past the last frame or
// at a malformed entry (Err says which).
func (c *PageCursor) Next(f *Frame) bool {
	if c.i >= c.n || c.r.err != nil {
		return false
	}
	*f = Frame{FirstRow: c.row}
	var pad int
	if c.Bare {
		if c.i == 0 {
			pad = c.r.int()
		}
		f.Rows, f.Values, f.Size, f.Raw = 1, 1, c.r.int(), true
	} else {
		f.Rows, f.Values, pad, f.Size, f.Raw = c.r.frame(c.version)
	}
	if c.Copies {
		f.Copy = c.r.int()
	}
	if c.r.err != nil {
		return false
	}
	c.off += pad
	f.Offset = c.off
	c.off += f.Size + f.Copy
	c.row += f.Rows
	c.i++
	return true
}

// Err is the error that stopped Next early: a malformed page entry.
func (c *PageCursor) Err() error {
	if c.r.err != nil {
		return badFrames("page entry of row group %d column %d page %d", c.at[0], c.at[1], c.at[2])
	}
	return nil
}

// ParseFrameTable parses a frame table read from a file of rowGroups row
// groups of columns leaf columns each.
func ParseFrameTable(b []byte, rowGroups, columns int) (*FrameTable, error) {
	if len(b) < len(framesMagic) || string(b[:len(framesMagic)]) != framesMagic {
		return nil, badFrames("no table at the marker's offset")
	}
	r := tableReader{b: b, at: len(framesMagic)}
	v := r.int()
	if v < FramesVersion || v > FramesVersionCopies {
		return nil, badFrames("table version %d", v)
	}
	t := &FrameTable{raw: b, version: v}
	if n := r.int(); n != rowGroups {
		return nil, badFrames("%d row groups in the table, %d in the file", n, rowGroups)
	}
	t.pos = make([][][]int32, rowGroups)
	for rg := range t.pos {
		if n := r.int(); n != columns {
			return nil, badFrames("%d columns in row group %d of the table, %d in the file", n, rg, columns)
		}
		t.pos[rg] = make([][]int32, columns)
		for c := range columns {
			np := r.int()
			if r.err != nil || np > len(b) {
				return nil, badFrames("truncated at row group %d column %d", rg, c)
			}
			ps := make([]int32, np)
			for p := range ps {
				ps[p] = int32(r.at)
				r.int()
				r.int()
				flags := 0
				if v >= FramesVersionValues {
					flags = r.int()
				}
				bare, copies := flags&pageBare != 0, flags&pageCopies != 0
				nf := r.int()
				if r.err != nil || nf > len(b) {
					return nil, badFrames("truncated at row group %d column %d page %d", rg, c, p)
				}
				if bare {
					if nf > 0 {
						r.int() // the packed lengths
					}
					for range nf {
						r.int()
					}
					continue
				}
				for range nf {
					r.frame(v)
					if copies {
						r.int()
					}
				}
			}
			t.pos[rg][c] = ps
		}
	}
	if r.err != nil {
		return nil, badFrames("truncated")
	}
	if r.at != len(b) {
		return nil, badFrames("%d bytes after the table", len(b)-r.at)
	}
	return t, nil
}

// frame reads one frame's entry of a table of version v.
func (r *tableReader) frame(v int) (rows, values, pad, size int, raw bool) {
	if v >= FramesVersionCompact {
		x := r.int()
		size, raw = x>>2, x&2 != 0
		if x&1 == 1 {
			return 1, 1, 0, size, raw
		}
		return r.int(), r.int(), r.int(), size, raw
	}
	rows, values, pad, size = r.int(), r.int(), r.int(), r.int()
	if v >= FramesVersionRaw {
		raw, size = size&1 == 1, size>>1
	}
	return rows, values, pad, size, raw
}

type tableReader struct {
	b   []byte
	at  int
	err error
}

func (r *tableReader) int() int {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.at:])
	if n <= 0 || v > 1<<31 {
		r.err = errors.New("bad varint")
		return 0
	}
	r.at += n
	return int(v)
}

// tableWriter builds a frame table as the file is written.
type tableWriter struct {
	b       []byte
	version int
}

func newTableWriter(version int) *tableWriter {
	w := &tableWriter{b: []byte(framesMagic), version: version}
	w.int(version)
	return w
}

func (w *tableWriter) int(v int) { w.b = binary.AppendUvarint(w.b, uint64(v)) }

// page starts a page's entry: where its values start (its header and
// levels, head bytes), its levels' length, its flags (FramesVersionValues:
// pageBare, pageCopies), and how many frames follow.
func (w *tableWriter) page(head, levels int, flags int, frames int) {
	w.int(head)
	w.int(levels)
	if w.version >= FramesVersionValues {
		w.int(flags)
	}
	w.int(frames)
}

// bareFrames writes the frames of a bare page (FramesVersionValues):
// the bytes before the first value (pad), then each value's size.
func (w *tableWriter) bareFrames(pad int, sizes []int32) {
	if len(sizes) > 0 {
		w.int(pad)
	}
	for _, n := range sizes {
		w.int(int(n))
	}
}

// frame writes one frame's entry (tableReader.frame reads it).
func (w *tableWriter) frame(rows, values, pad, size int, raw bool) {
	if w.version >= FramesVersionCompact {
		one := rows == 1 && values == 1 && pad == 0
		w.int(size<<2 | b2i(raw)<<1 | b2i(one))
		if !one {
			w.int(rows)
			w.int(values)
			w.int(pad)
		}
		return
	}
	w.int(rows)
	w.int(values)
	w.int(pad)
	if w.version >= FramesVersionRaw {
		// The size, and in bit 0 whether the values are a raw block.
		w.int(size<<1 | b2i(raw))
	} else {
		w.int(size)
	}
}
