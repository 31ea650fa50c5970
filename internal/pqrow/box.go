package pqrow

import (
	"time"
	"unsafe"
)

// Boxing a value as an interface (any) copies it to a new allocation of
// its own for every type wider than a pointer: a row of a read result
// cost one allocation per value, the largest share of a one-key direct
// join's allocations and the garbage collection they brought
// (docs/fileindex.md). boxEach instead makes each interface value point
// at its element of a typed slab, so a column of n values costs one
// allocation. That is the representation the runtime itself gives such an
// interface (a type word and a pointer to the value), built by hand:
//   - the types are fixed (boxable) and none is pointer-shaped (stored in
//     the interface word itself), so the data word is always a pointer to
//     the value, as the runtime expects;
//   - a pointer into a slab keeps the whole slab alive for the garbage
//     collector, like any interior pointer;
//   - an interface's value is never written through, and the slabs are
//     never written after boxing (each Box call makes its own, or boxes a
//     vector's own slice, which no one writes after the read).
//
// TestBoxEach checks that the values compare, switch, format and survive
// collection as ordinarily boxed values do.

// boxable are the element types boxEach accepts: none is pointer-shaped.
type boxable interface {
	int8 | int16 | int32 | int64 | float32 | float64 | string | time.Time
}

// eface is the runtime's layout of an interface{} value.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// boxEach stores vals[k] at dst[off+k*stride] as an interface value
// pointing at vals[k] (nil where null[k]).
func boxEach[T boxable](dst []any, stride, off int, vals []T, null []bool) {
	var zero T
	tmpl := any(zero)
	typ := (*eface)(unsafe.Pointer(&tmpl)).typ
	for k := range vals {
		i := off + k*stride
		if null != nil && null[k] {
			dst[i] = nil
			continue
		}
		var x any
		e := (*eface)(unsafe.Pointer(&x))
		e.typ, e.data = typ, unsafe.Pointer(&vals[k])
		dst[i] = x
	}
}

// Slab boxes values of one type one at a time, each interface pointing at
// its own element of a shared slab (as boxEach does for a column): one
// allocation per slabValues values instead of one per value, for a stream
// of rows converted value by value. An element is never written after it
// is boxed (a full slab is left to its values and a new one begun), so the
// argument above holds. A boxed value keeps its whole slab alive.
//
// Its zero value is ready; it is not safe for concurrent use.
type Slab[T boxable] struct {
	buf []T
	typ unsafe.Pointer
}

// slabValues is how many values a slab holds at most: slabs start at 8
// values and double, so that converting one row costs little.
const slabValues = 512

// Box returns v as an interface value.
func (s *Slab[T]) Box(v T) any {
	if len(s.buf) == cap(s.buf) {
		if s.typ == nil {
			var zero T
			tmpl := any(zero)
			s.typ = (*eface)(unsafe.Pointer(&tmpl)).typ
		}
		s.buf = make([]T, 0, min(max(2*cap(s.buf), 8), slabValues))
	}
	s.buf = append(s.buf, v)
	var x any
	e := (*eface)(unsafe.Pointer(&x))
	e.typ, e.data = s.typ, unsafe.Pointer(&s.buf[len(s.buf)-1])
	return x
}
