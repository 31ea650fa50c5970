package pqrow

import (
	"encoding/binary"
	"errors"

	"github.com/parquet-go/parquet-go/format"
)

// ParsePageHeader decodes the Thrift compact-protocol page header at the
// start of b and returns it with its length in bytes. It reads only the
// fields that the row index's direct page path and the LZ4_RAW guard use
// (type, sizes, and the data page v1, v2 and dictionary page headers' counts
// and encodings) and skips every other field, statistics included.
// parquet-go's reflective decoder cost ≈10 µs a header, about a tenth of a
// light lookup's CPU over its ≈45 pages. A header cut short fails.
func ParsePageHeader(b []byte) (h format.PageHeader, n int, err error) {
	r := compactReader{b: b}
	r.structFields(func(id int16, t byte) bool {
		switch {
		case id == 1 && t == ctI32:
			h.Type = format.PageType(r.i32())
		case id == 2 && t == ctI32:
			h.UncompressedPageSize = r.i32()
		case id == 3 && t == ctI32:
			h.CompressedPageSize = r.i32()
		case id == 5 && t == ctStruct:
			d := &h.DataPageHeader.V
			h.DataPageHeader.Valid = true
			r.structFields(func(id int16, t byte) bool {
				switch {
				case id == 1 && t == ctI32:
					d.NumValues = r.i32()
				case id == 2 && t == ctI32:
					d.Encoding = format.Encoding(r.i32())
				case id == 3 && t == ctI32:
					d.DefinitionLevelEncoding = format.Encoding(r.i32())
				case id == 4 && t == ctI32:
					d.RepetitionLevelEncoding = format.Encoding(r.i32())
				default:
					return false
				}
				return true
			})
		case id == 7 && t == ctStruct:
			d := &h.DictionaryPageHeader.V
			h.DictionaryPageHeader.Valid = true
			r.structFields(func(id int16, t byte) bool {
				switch {
				case id == 1 && t == ctI32:
					d.NumValues = r.i32()
				case id == 2 && t == ctI32:
					d.Encoding = format.Encoding(r.i32())
				default:
					return false
				}
				return true
			})
		case id == 8 && t == ctStruct:
			d := &h.DataPageHeaderV2.V
			h.DataPageHeaderV2.Valid = true
			r.structFields(func(id int16, t byte) bool {
				switch {
				case id == 1 && t == ctI32:
					d.NumValues = r.i32()
				case id == 2 && t == ctI32:
					d.NumNulls = r.i32()
				case id == 3 && t == ctI32:
					d.NumRows = r.i32()
				case id == 4 && t == ctI32:
					d.Encoding = format.Encoding(r.i32())
				case id == 5 && t == ctI32:
					d.DefinitionLevelsByteLength = r.i32()
				case id == 6 && t == ctI32:
					d.RepetitionLevelsByteLength = r.i32()
				case id == 7 && (t == ctTrue || t == ctFalse):
					d.IsCompressed.Valid, d.IsCompressed.V = true, t == ctTrue
				default:
					return false
				}
				return true
			})
		default:
			return false
		}
		return true
	})
	if r.err != nil {
		return h, 0, r.err
	}
	return h, r.pos, nil
}

// Thrift compact-protocol field types.
const (
	ctTrue   = 1
	ctFalse  = 2
	ctByte   = 3
	ctI16    = 4
	ctI32    = 5
	ctI64    = 6
	ctDouble = 7
	ctBinary = 8
	ctList   = 9
	ctSet    = 10
	ctMap    = 11
	ctStruct = 12
)

var errThrift = errors.New("bad thrift compact encoding")

// compactReader reads Thrift's compact protocol from a byte slice; the
// first error sticks (err) and every later read returns zero.
type compactReader struct {
	b     []byte
	pos   int
	err   error
	depth int
}

func (r *compactReader) fail() {
	if r.err == nil {
		r.err = errThrift
	}
	r.pos = len(r.b)
}

func (r *compactReader) byte() byte {
	if r.pos >= len(r.b) {
		r.fail()
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *compactReader) uvarint() uint64 {
	v, k := binary.Uvarint(r.b[min(r.pos, len(r.b)):])
	if k <= 0 {
		r.fail()
		return 0
	}
	r.pos += k
	return v
}

func (r *compactReader) i32() int32 {
	u := r.uvarint()
	return int32(int64(u>>1) ^ -int64(u&1))
}

// structFields calls field for each field of a struct until its stop
// byte; field reads the value and returns true, or returns false to have
// it skipped.
func (r *compactReader) structFields(field func(id int16, t byte) bool) {
	if r.depth++; r.depth > 32 {
		r.fail()
		return
	}
	defer func() { r.depth-- }()
	var id int16
	for r.err == nil {
		c := r.byte()
		if c == 0 {
			return
		}
		t := c & 0x0f
		if d := c >> 4; d != 0 {
			id += int16(d)
		} else {
			id = int16(r.i32())
		}
		if !field(id, t) {
			r.skip(t)
		}
	}
}

// skip skips a value of type t.
func (r *compactReader) skip(t byte) {
	switch t {
	case ctTrue, ctFalse:
	case ctByte:
		r.byte()
	case ctI16, ctI32, ctI64:
		r.uvarint()
	case ctDouble:
		r.pos += 8
		if r.pos > len(r.b) {
			r.fail()
		}
	case ctBinary:
		n := r.uvarint()
		if n > uint64(len(r.b)-r.pos) {
			r.fail()
			return
		}
		r.pos += int(n)
	case ctList, ctSet:
		c := r.byte()
		n, et := uint64(c>>4), c&0x0f
		if n == 15 {
			n = r.uvarint()
		}
		if n > uint64(len(r.b)-r.pos) { // every element takes a byte at least
			r.fail()
			return
		}
		for range n {
			if r.err != nil {
				return
			}
			if et == ctTrue || et == ctFalse {
				r.byte() // a bool element is one byte
			} else {
				r.skip(et)
			}
		}
	case ctMap:
		n := r.uvarint()
		if n == 0 {
			return
		}
		kv := r.byte()
		if n > uint64(len(r.b)-r.pos)/2 { // every entry takes two bytes at least
			r.fail()
			return
		}
		for range n {
			if r.err != nil {
				return
			}
			r.skip(kv >> 4)
			r.skip(kv & 0x0f)
		}
	case ctStruct:
		r.structFields(func(int16, byte) bool { return false })
	default:
		r.fail()
	}
}
