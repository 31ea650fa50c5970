package metadata

// IndexType is the type of an index definition (§3.2–§3.7).
type IndexType int

// The index types, in the lookup precedence of §3.1 step 6.
const (
	Regular IndexType = iota + 1
	Computed
	ExplodedField
	Bloom
	Temporal
	Range
)

// String returns the type's name as messages use it: "regular",
// "computed", "exploded field", "bloom", "temporal", "range".
func (t IndexType) String() string {
	switch t {
	case Regular:
		return "regular"
	case Computed:
		return "computed"
	case ExplodedField:
		return "exploded field"
	case Bloom:
		return "bloom"
	case Temporal:
		return "temporal"
	case Range:
		return "range"
	}
	return "unknown"
}

// Article returns the indefinite article for the type's name in messages
// ("an" only for "exploded field", §3.1 step 6).
func (t IndexType) Article() string {
	if t == ExplodedField {
		return "an"
	}
	return "a"
}

// ExistingType returns the type under which col is registered as an index
// key, with the lookup precedence of §3.1 step 6: regular, computed,
// exploded field (by as_column), bloom, temporal, range. Auto-bloom
// registrations are not index keys. ok is false when col is not registered.
func ExistingType(m *Metadata, col string) (t IndexType, ok bool) {
	for _, c := range m.Indexes {
		if c == col {
			return Regular, true
		}
	}
	if m.ComputedIndexes.Has(col) {
		return Computed, true
	}
	for _, e := range m.ExplodedFieldIndexes {
		if e.AsColumn == col {
			return ExplodedField, true
		}
	}
	for _, b := range m.BloomIndexes {
		if b.Column == col {
			return Bloom, true
		}
	}
	for _, tm := range m.TemporalIndexes {
		if tm.Column == col {
			return Temporal, true
		}
	}
	for _, r := range m.RangeIndexes {
		if r.Column == col {
			return Range, true
		}
	}
	return 0, false
}

// IndexColumns returns the user-visible index columns (the original's
// Index.indexes, §2.2): regular columns, computed names, exploded
// as_columns, bloom columns, temporal value columns and range columns, in
// that order without duplicates. Auto-bloom names are not added (they are
// already regular, computed or exploded columns).
func IndexColumns(m *Metadata) []string {
	cols := []string{}
	for _, c := range m.Indexes {
		cols = appendNew(cols, c)
	}
	for _, c := range m.ComputedIndexes.Keys() {
		cols = appendNew(cols, c)
	}
	for _, e := range m.ExplodedFieldIndexes {
		cols = appendNew(cols, e.AsColumn)
	}
	for _, b := range m.BloomIndexes {
		cols = appendNew(cols, b.Column)
	}
	for _, t := range m.TemporalIndexes {
		cols = appendNew(cols, t.Column)
	}
	for _, r := range m.RangeIndexes {
		cols = appendNew(cols, r.Column)
	}
	return cols
}

// StorageColumns returns the index columns stored as value arrays in the
// main index table under their own names (the "storage columns" of §0 that
// take part in batching, large-index splitting and stats): regular columns,
// computed names, exploded as_columns and temporal value columns, in that
// order without duplicates. Bloom and range columns are stored under
// prefixed names and are not included.
func StorageColumns(m *Metadata) []string {
	var cols []string
	for _, c := range m.Indexes {
		cols = appendNew(cols, c)
	}
	for _, c := range m.ComputedIndexes.Keys() {
		cols = appendNew(cols, c)
	}
	for _, e := range m.ExplodedFieldIndexes {
		cols = appendNew(cols, e.AsColumn)
	}
	for _, t := range m.TemporalIndexes {
		cols = appendNew(cols, t.Column)
	}
	if cols == nil {
		cols = []string{}
	}
	return cols
}
