package metadata

import "iter"

// StringMap is a string-to-string JSON object that keeps its keys in
// insertion order, as Gson's LinkedTreeMap does in the original: computed
// indexes are applied "in map iteration order" (§3.3), so the order read from
// metadata.json is the order written back and the order of evaluation.
//
// The zero value is an empty map ready to use. Maps in this package are tiny
// (a handful of entries), so lookups are linear.
type StringMap struct {
	entries []stringEntry
}

type stringEntry struct{ key, value string }

// NewStringMap returns a map of the given key, value pairs in order; a
// repeated key keeps its first position and its last value. It panics if
// kv has an odd length.
func NewStringMap(kv ...string) StringMap {
	if len(kv)%2 != 0 {
		panic("metadata: NewStringMap needs key, value pairs")
	}
	var m StringMap
	for i := 0; i < len(kv); i += 2 {
		m.Set(kv[i], kv[i+1])
	}
	return m
}

// Len returns the number of entries.
func (m StringMap) Len() int { return len(m.entries) }

// Get returns the value of key and whether it is present.
func (m StringMap) Get(key string) (string, bool) {
	for _, e := range m.entries {
		if e.key == key {
			return e.value, true
		}
	}
	return "", false
}

// Has reports whether key is present.
func (m StringMap) Has(key string) bool {
	_, ok := m.Get(key)
	return ok
}

// Set replaces the value of key in place, or appends key at the end.
func (m *StringMap) Set(key, value string) {
	for i := range m.entries {
		if m.entries[i].key == key {
			m.entries[i].value = value
			return
		}
	}
	m.entries = append(m.entries, stringEntry{key, value})
}

// Delete removes key, keeping the order of the others.
func (m *StringMap) Delete(key string) {
	for i := range m.entries {
		if m.entries[i].key == key {
			m.entries = append(m.entries[:i:i], m.entries[i+1:]...)
			return
		}
	}
}

// Keys returns the keys in order.
func (m StringMap) Keys() []string {
	keys := make([]string, len(m.entries))
	for i, e := range m.entries {
		keys[i] = e.key
	}
	return keys
}

// All yields the entries in order.
func (m StringMap) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, e := range m.entries {
			if !yield(e.key, e.value) {
				return
			}
		}
	}
}

// Clone returns an independent copy.
func (m StringMap) Clone() StringMap {
	return StringMap{entries: append([]stringEntry(nil), m.entries...)}
}

// Equal reports whether m and o hold the same entries in the same order.
func (m StringMap) Equal(o StringMap) bool {
	if len(m.entries) != len(o.entries) {
		return false
	}
	for i := range m.entries {
		if m.entries[i] != o.entries[i] {
			return false
		}
	}
	return true
}
