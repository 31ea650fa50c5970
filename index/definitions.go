package index

import (
	"context"
	"strings"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
)

// DefaultBloomFPR is the false-positive rate of AddBloomIndex when none is
// given (§3.10).
const DefaultBloomFPR = 0.01

// definition describes one add*Index call for the shared rules of §3.1.
type definition struct {
	typ      metadata.IndexType
	key      string   // the index column (regular/bloom/range/temporal value column, computed name, exploded alias)
	required []string // names of the required string arguments, for messages, with values in args
	args     []string
	// validate runs after the common checks 1–3 (e.g. the bloom FPR range).
	validate func() error
	// sameType reports whether key is already registered as typ.
	sameType func(m *metadata.Metadata) bool
	// schemaCheck runs the schema existence checks of step 7.
	schemaCheck func(st *schema.Struct) error
	// apply appends the definition (step 8).
	apply func(m *metadata.Metadata)
}

// register applies the rules of §3.1 in order: required arguments,
// reserved names, nested keys, the storage preflight, idempotence,
// exclusivity across types, schema checks, then one metadata write (a
// compare-and-swap; a concurrent registration is re-checked against the
// winner's metadata).
func (ix *Index) register(ctx context.Context, d definition) error {
	for i, a := range d.args {
		if strings.TrimSpace(a) == "" {
			return aerr.Invalid("%s must not be null or blank", d.required[i])
		}
	}
	if metadata.IsReservedStagingColumn(d.key) {
		return aerr.Invalid("Column '%s' is reserved for Ariadne staging metadata", d.key)
	}
	if strings.Contains(d.key, ".") {
		return aerr.Invalid("Nested column '%s' cannot be used as a %s index key: index values are stored under the column's own name", d.key, d.typ)
	}
	if d.validate != nil {
		if err := d.validate(); err != nil {
			return err
		}
	}
	if err := ix.EnsureStorageReady(ctx); err != nil {
		return err
	}
	return ix.updateMetadata(ctx, func(m *metadata.Metadata) (bool, error) {
		if d.sameType(m) {
			return false, nil
		}
		if existing, ok := metadata.ExistingType(m, d.key); ok {
			return false, aerr.Invalid("Column '%s' is already %s %s index. A column cannot be both %s %s index and %s %s index.",
				d.key, existing.Article(), existing, d.typ.Article(), d.typ, existing.Article(), existing)
		}
		if m.Schema != "" && d.schemaCheck != nil {
			st, err := schema.Parse(m.Schema)
			if err != nil {
				return false, aerr.SchemaParse(err)
			}
			if err := d.schemaCheck(st); err != nil {
				return false, err
			}
		}
		d.apply(m)
		return true, nil
	})
}

func columnExists(col string) func(st *schema.Struct) error {
	return func(st *schema.Struct) error {
		if _, ok := st.Resolve(col); !ok {
			return aerr.ColumnNotFound("Column '" + col + "' not found in schema")
		}
		return nil
	}
}

// AddIndex registers a regular index on column (§3.2). Idempotent.
func (ix *Index) AddIndex(ctx context.Context, column string) error {
	return ix.register(ctx, definition{
		typ: metadata.Regular, key: column, required: []string{"column"}, args: []string{column},
		sameType: func(m *metadata.Metadata) bool {
			t, ok := metadata.ExistingType(m, column)
			return ok && t == metadata.Regular
		},
		schemaCheck: columnExists(column),
		apply:       func(m *metadata.Metadata) { m.Indexes = append(m.Indexes, column) },
	})
}

// AddBloomIndex registers a bloom index on column with false-positive rate
// fpr, which must lie strictly between 0 and 1 (§3.5). Idempotent: re-adding
// with another FPR keeps the original one (§9 item 19).
func (ix *Index) AddBloomIndex(ctx context.Context, column string, fpr float64) error {
	return ix.register(ctx, definition{
		typ: metadata.Bloom, key: column, required: []string{"column"}, args: []string{column},
		validate: func() error {
			if !(fpr > 0 && fpr < 1) {
				return aerr.Invalid("False positive rate must be between 0 and 1 (exclusive), got %v", fpr)
			}
			return nil
		},
		sameType: func(m *metadata.Metadata) bool {
			t, ok := metadata.ExistingType(m, column)
			return ok && t == metadata.Bloom
		},
		schemaCheck: columnExists(column),
		apply: func(m *metadata.Metadata) {
			m.BloomIndexes = append(m.BloomIndexes, metadata.BloomIndex{Column: column, FPR: fpr})
		},
	})
}

// AddRangeIndex registers a min/max index on column (§3.6). Idempotent.
func (ix *Index) AddRangeIndex(ctx context.Context, column string) error {
	return ix.register(ctx, definition{
		typ: metadata.Range, key: column, required: []string{"column"}, args: []string{column},
		sameType: func(m *metadata.Metadata) bool {
			t, ok := metadata.ExistingType(m, column)
			return ok && t == metadata.Range
		},
		schemaCheck: columnExists(column),
		apply: func(m *metadata.Metadata) {
			m.RangeIndexes = append(m.RangeIndexes, metadata.RangeIndex{Column: column})
		},
	})
}

// AddComputedIndex registers a computed index: name = the SQL expression
// (§3.3). The expression is not validated until it is evaluated.
// Idempotent on name.
func (ix *Index) AddComputedIndex(ctx context.Context, name, sqlExpression string) error {
	return ix.register(ctx, definition{
		typ: metadata.Computed, key: name, required: []string{"name", "sqlExpression"}, args: []string{name, sqlExpression},
		sameType: func(m *metadata.Metadata) bool {
			t, ok := metadata.ExistingType(m, name)
			return ok && t == metadata.Computed
		},
		apply: func(m *metadata.Metadata) { m.ComputedIndexes.Set(name, sqlExpression) },
	})
}

// AddTemporalIndex registers a temporal index: per value of column, the
// file with the latest timestampColumn (§3.7). The timestamp column may be a
// nested path. Idempotent on column (another timestamp column is ignored,
// §9 item 19).
func (ix *Index) AddTemporalIndex(ctx context.Context, column, timestampColumn string) error {
	return ix.register(ctx, definition{
		typ: metadata.Temporal, key: column, required: []string{"column", "timestampColumn"}, args: []string{column, timestampColumn},
		sameType: func(m *metadata.Metadata) bool {
			t, ok := metadata.ExistingType(m, column)
			return ok && t == metadata.Temporal
		},
		schemaCheck: func(st *schema.Struct) error {
			if err := columnExists(column)(st); err != nil {
				return err
			}
			return columnExists(timestampColumn)(st)
		},
		apply: func(m *metadata.Metadata) {
			m.TemporalIndexes = append(m.TemporalIndexes, metadata.TemporalIndex{Column: column, TimestampColumn: timestampColumn})
		},
	})
}

// AddExplodedFieldIndex registers an index on field fieldPath of the
// elements of array column arrayColumn, under the name asColumn (§3.4).
// Idempotent on asColumn.
func (ix *Index) AddExplodedFieldIndex(ctx context.Context, arrayColumn, fieldPath, asColumn string) error {
	return ix.register(ctx, definition{
		typ: metadata.ExplodedField, key: asColumn,
		required: []string{"arrayColumn", "fieldPath", "asColumn"}, args: []string{arrayColumn, fieldPath, asColumn},
		sameType: func(m *metadata.Metadata) bool {
			t, ok := metadata.ExistingType(m, asColumn)
			return ok && t == metadata.ExplodedField
		},
		schemaCheck: func(st *schema.Struct) error {
			f, ok := st.Resolve(arrayColumn)
			if !ok {
				return aerr.ColumnNotFound("Column '" + arrayColumn + "' not found in schema")
			}
			if !strings.Contains(arrayColumn, ".") {
				if _, isArray := f.Type.(*schema.Array); !isArray {
					return aerr.Invalid("Column '%s' is %s, not ArrayType. Exploded field indexes require an array column.", arrayColumn, schema.TypeName(f.Type))
				}
			}
			return nil
		},
		apply: func(m *metadata.Metadata) {
			m.ExplodedFieldIndexes = append(m.ExplodedFieldIndexes, metadata.ExplodedFieldIndex{ArrayColumn: arrayColumn, FieldPath: fieldPath, AsColumn: asColumn})
		},
	})
}

// Indexes returns the index columns usable as lookup and join keys (§2.2):
// regular, computed, exploded aliases, bloom, temporal and range columns.
func (ix *Index) Indexes() []string { return metadata.IndexColumns(ix.state.Load().m) }
