package rowindex

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/ariadne-go/ariadne/prepared"
)

// Interleaved column groups (prepared.FrameOptions.Interleave): in such a
// file each frame of the key column is followed, in its page, by a copy of
// the group's values for the frame's rows. A lookup reads, per file and
// key, the key's frame and its copy as one byte range and decodes every
// requested group column from the copy, decompressed once for all of them;
// the other columns are read as in any framed file.

// copyGroup is an interleaved file's group, from its frames marker.
type copyGroup struct {
	host int         // the key's leaf: its frames carry the copies
	at   map[int]int // a group leaf's position in a copy
	// optional[i] says group column i carries a bitmap in a copy.
	optional []bool
	dec      *zstd.Decoder // of the copies' frames, with the file's dictionary
}

// loadCopies resolves an interleaved file's group (mk.Interleave) to leaf
// columns. A group that does not name flat columns of the file is a
// *prepared.FrameTableError.
func loadCopies(fm *fileMeta, mk prepared.FramesMarker) error {
	if mk.Interleave == nil {
		return nil
	}
	leaf := func(name string) (int, error) {
		c := fm.f.Root().Column(name)
		if c == nil || !c.Leaf() || c.Index() >= len(fm.maxRep) || fm.maxRep[c.Index()] != 0 {
			return 0, badFrame("interleaved column %q is not a flat column of the file", name)
		}
		return c.Index(), nil
	}
	host, err := leaf(mk.Interleave.Host)
	if err != nil {
		return err
	}
	dec, err := mk.Interleave.Decoder()
	if err != nil {
		return err
	}
	cg := &copyGroup{host: host, at: map[int]int{}, dec: dec}
	for i, name := range mk.Interleave.Columns {
		l, err := leaf(name)
		if err != nil {
			return err
		}
		if _, dup := cg.at[l]; dup || l == host {
			return badFrame("interleaved column %q twice", name)
		}
		cg.at[l] = i
		cg.optional = append(cg.optional, fm.maxDef[l] > 0)
	}
	fm.copies = cg
	return nil
}

// copySet is the copies a lookup reads in one row group: those following
// the key's frames that hold a selected row, in row order, decoded once
// for every group column's chunk read (which share the set).
type copySet struct {
	frames []plannedCopy
	once   sync.Once
	cols   [][]prepared.CopyColumn // per frame, per group column
	err    error
}

// plannedCopy is one copy: where it is and the rows of its frame.
type plannedCopy struct {
	off   int64 // in the file
	size  int
	rows  int
	first int64 // the frame's first row in the row group
}

// planCopied plans the chunk read cr from the interleaved copies when its
// column is in the file's group and the key's chunk is framed: the ranges
// of the copies after the key's frames holding the selected rows (the
// frames themselves are read only when the key column is asked for: they
// are adjacent, so the ranges coalesce into one). The group's chunk reads
// of a row group share one copySet. It reports whether cr is read so.
func planCopied(w *fileWork, g *rgWork, cr *chunkRead) (bool, error) {
	cg := w.fm.copies
	at, ok := cg.at[cr.leaf]
	if !ok || !w.fm.aligned[g.rg*w.fm.ncol()+cg.host] || !framedChunk(w.fm, g.rg, cg.host) {
		return false, nil
	}
	if _, ok := frameInfo(w.fm, g.rg, cr.leaf); !ok {
		return false, nil
	}
	cr.copyAt = at
	for _, o := range g.chunks {
		if o.copies != nil {
			cr.copies = o.copies
			return true, nil
		}
	}
	set := &copySet{}
	err := eachFrame(w.fm, g.rg, cg.host, g.runs, func(loc format.PageLocation, pf *prepared.PageHead, fr prepared.Frame, first int64) error {
		if !pf.Copies || fr.Copy == 0 {
			return badFrame("frame at %d of the key column has no interleaved copy", loc.Offset+int64(fr.Offset))
		}
		off := loc.Offset + int64(fr.Offset+fr.Size)
		w.ranges = append(w.ranges, brange{off, off + int64(fr.Copy)})
		set.frames = append(set.frames, plannedCopy{off: off, size: fr.Copy, rows: fr.Rows, first: first})
		return nil
	})
	if err != nil {
		return false, err
	}
	cr.copies = set
	return true, nil
}

// decode checks and decompresses the set's copies from the prefetched
// ranges.
func (s *copySet) decode(w *fileWork, m *meter, optional []bool) error {
	unzip := func(z []byte) ([]byte, error) { return w.fm.copies.dec.DecodeAll(z, nil) }
	s.cols = make([][]prepared.CopyColumn, len(s.frames))
	for i, pc := range s.frames {
		b, ok := w.sp.slice(pc.off, int64(pc.size))
		if !ok {
			return fmt.Errorf("rowindex: interleaved copy at %d not prefetched", pc.off)
		}
		cols, err := prepared.ParseCopy(b, pc.rows, optional, unzip)
		if err != nil {
			return fmt.Errorf("interleaved copy at %d: %w", pc.off, err)
		}
		s.cols[i] = cols
		m.pages.Add(1)
		m.frames.Add(1)
	}
	return nil
}

// decodeCopies decodes a group column's selected rows from the copies.
func (c *chunkRead) decodeCopies() error {
	s := c.copies
	s.once.Do(func() { s.err = s.decode(c.w, c.m, c.w.fm.copies.optional) })
	if s.err != nil {
		return s.err
	}
	ci, _ := frameInfo(c.w.fm, c.rg, c.leaf)
	c.vals, c.starts, c.arena = make([]parquet.Value, 0, c.selected), nil, valueArena{}
	k := 0 // the run being filled
	for i, pc := range s.frames {
		col := s.cols[i][c.copyAt]
		pr := plainReader{data: col.Values, ci: ci}
		row, vi := 0, 0 // vi: the defined rows of the copy before row
		end := pc.first + int64(pc.rows)
		for ; k < len(c.runs); k++ {
			r := c.runs[k]
			lo, hi := max(r.row, pc.first), min(r.row+r.n, end)
			if lo >= hi {
				if r.row >= end {
					break
				}
				continue
			}
			for x := lo; x < hi; x++ {
				for at := int(x - pc.first); row < at; row++ {
					if col.IsDefined(row) {
						vi++
					}
				}
				if !col.IsDefined(row) {
					c.keep(parquet.Value{}.Level(0, 0, ci.leaf), true, false, false)
					continue
				}
				var v parquet.Value
				if ci.typ == format.Boolean {
					if vi >= len(col.Values) {
						return badFrame("boolean %d past the copy's %d", vi, len(col.Values))
					}
					v = parquet.BooleanValue(col.Values[vi] != 0)
				} else {
					var err error
					if v, err = pr.value(vi); err != nil {
						return badFrame("interleaved copy at %d: %v", pc.off, err)
					}
				}
				// The copy's content is this lookup's own buffer: values
				// may point into it.
				c.keep(v.Level(0, ci.maxDef, ci.leaf), true, false, false)
			}
			if r.row+r.n > end {
				break // the run goes on in the next copy
			}
		}
	}
	return nil
}
