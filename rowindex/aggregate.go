package rowindex

import (
	"fmt"
	"maps"
	"slices"
)

// aggState accumulates the aggregates of one key: one slot per aggregate of
// the definition.
type aggState struct {
	slots []any // count,sum: int64|float64; min,max: value|nil; count-by: map[string]int64
}

func newAggState(aggs []Aggregate) *aggState {
	s := &aggState{slots: make([]any, len(aggs))}
	for i, a := range aggs {
		switch a.Op {
		case "count":
			s.slots[i] = int64(0)
		case "count-by":
			s.slots[i] = map[string]int64{}
		}
	}
	return s
}

// add folds one row in; vals[i] is the row's value of aggregate i's column
// (unused for count).
func (s *aggState) add(aggs []Aggregate, vals []any) {
	for i, a := range aggs {
		s.slots[i] = fold(a.Op, s.slots[i], vals[i], 1)
	}
}

// fold combines an accumulated slot with a value (count-by: n occurrences).
func fold(op string, acc, v any, n int64) any {
	switch op {
	case "count":
		return acc.(int64) + n
	case "sum":
		if v == nil {
			return acc
		}
		if acc == nil {
			return v
		}
		ai, aok := acc.(int64)
		vi, vok := v.(int64)
		if aok && vok {
			return ai + vi
		}
		af, _ := toFloat(acc)
		vf, _ := toFloat(v)
		return af + vf
	case "min", "max":
		if v == nil {
			return acc
		}
		if acc == nil {
			return v
		}
		c := compareValues(v, acc)
		if op == "min" && c < 0 || op == "max" && c > 0 {
			return v
		}
		return acc
	case "count-by":
		m := acc.(map[string]int64)
		m[fmt.Sprint(v)] += n
		return m
	}
	return acc
}

// compareValues orders two hoisted values of one column.
func compareValues(a, b any) int {
	if af, ok := toFloat(a); ok {
		if bf, ok := toFloat(b); ok {
			switch {
			case af < bf:
				return -1
			case af > bf:
				return 1
			}
			return 0
		}
	}
	as, bs := fmt.Sprint(a), fmt.Sprint(b)
	switch {
	case as < bs:
		return -1
	case as > bs:
		return 1
	}
	return 0
}

// merge folds another partial state into s.
func (s *aggState) merge(aggs []Aggregate, o *aggState) {
	for i, a := range aggs {
		switch a.Op {
		case "count-by":
			for k, n := range o.slots[i].(map[string]int64) {
				s.slots[i].(map[string]int64)[k] += n
			}
		case "count":
			s.slots[i] = s.slots[i].(int64) + o.slots[i].(int64)
		default:
			s.slots[i] = fold(a.Op, s.slots[i], o.slots[i], 1)
		}
	}
}

// encode serialises the state as hoisted values: per slot its value, a
// count-by slot as the number of pairs then (value, count) pairs in value
// order.
func (s *aggState) encode(aggs []Aggregate) []byte {
	var b []byte
	for i, a := range aggs {
		if a.Op == "count-by" {
			m := s.slots[i].(map[string]int64)
			b = appendValue(b, int64(len(m)))
			for _, k := range slices.Sorted(maps.Keys(m)) {
				b = appendValue(appendValue(b, k), m[k])
			}
			continue
		}
		b = appendValue(b, s.slots[i])
	}
	return b
}

// decodeAggState parses an encoded state.
func decodeAggState(aggs []Aggregate, b []byte) (*aggState, error) {
	vals, err := decodeValues(b)
	if err != nil {
		return nil, err
	}
	s := newAggState(aggs)
	for i, a := range aggs {
		if len(vals) == 0 {
			return nil, corrupt("short aggregate record")
		}
		if a.Op != "count-by" {
			s.slots[i], vals = vals[0], vals[1:]
			continue
		}
		n, ok := vals[0].(int64)
		if !ok || int64(len(vals)-1) < 2*n {
			return nil, corrupt("bad count-by record")
		}
		m := s.slots[i].(map[string]int64)
		for j := range n {
			k, _ := vals[1+2*j].(string)
			c, _ := vals[2+2*j].(int64)
			m[k] = c
		}
		vals = vals[1+2*n:]
	}
	if _, ok := s.slots[0].(int64); len(aggs) > 0 && aggs[0].Op == "count" && !ok {
		return nil, corrupt("bad count in aggregate record")
	}
	return s, nil
}

// values returns the state as a map from the aggregate's name
// ("count", "sum:duration_ms", ...) to its value; count-by values are
// map[string]int64.
func (s *aggState) values(aggs []Aggregate) map[string]any {
	out := make(map[string]any, len(aggs))
	for i, a := range aggs {
		out[a.String()] = s.slots[i]
	}
	return out
}

// Aggregate records are entries too (see entry). Three forms exist:
//
//   - per data file (every build since removal exists): File is the data
//     file's id and RG is aggRG; Cover holds the key's partials over that
//     file's rows. Removing the file removes exactly its contribution.
//   - legacy (builds before removal existed): File is aggFile and RG is 0;
//     Cover holds the key's partials over every file of one fragment (all of
//     a key's entries of one build land in one fragment, so the record sits
//     next to the runs it summarises). A removal cannot correct it.
//   - stale marker: File is aggFile and RG is staleRG, Cover empty: the key's
//     legacy record lost a removed file's contribution (written by Compact
//     once the evidence, the removed runs, is dropped). Lookups on the key
//     fail with ErrStaleAggregates until the row index is rebuilt.
//
// Row and N are 0 in every form. In fragment order ((bucket, key, file, rg,
// row)) a key's stale marker and legacy records come first (file -1) and each
// file's partials just before that file's runs (rg -1).
const (
	aggRG   = -1 // RG of a per-file aggregate record
	staleRG = -1 // RG of a stale marker (with File == aggFile)
)

// isAggregate reports whether e is an aggregate record (of any form) rather
// than a run of rows.
func (e *entry) isAggregate() bool { return e.File == aggFile || e.RG == aggRG }

// isStale reports whether e is a stale marker.
func (e *entry) isStale() bool { return e.File == aggFile && e.RG == staleRG }

// isLegacyAggregate reports whether e is a legacy per-fragment record.
func (e *entry) isLegacyAggregate() bool { return e.File == aggFile && e.RG != staleRG }
