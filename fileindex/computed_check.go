package fileindex

import (
	"context"
	"os"

	"github.com/ariadne-go/ariadne/internal/duck"
)

// CheckComputed plans the SQL expression of a computed index named name
// over an empty table with the index's stored schema (after the computed
// indexes already registered, which it may use) and returns a
// *ComputedIndexError (ErrComputedExpression) if DuckDB cannot evaluate it.
// It reads no data file. The Spark library validates expressions only at
// update (spec §3.3); since index definitions can never be removed (§9 item
// 19), registering a malformed one would leave every later update failing,
// so the command line checks before registering.
func (fi *FileIndex) CheckComputed(ctx context.Context, name, expr string) error {
	src, err := fi.ix.StoredSchema()
	if err != nil {
		return err
	}
	m := fi.ix.Metadata()
	if m.ComputedIndexes.Has(name) {
		return nil // already registered: re-adding is a no-op (§3.1 step 5)
	}
	m.ComputedIndexes.Set(name, expr)
	tmp, err := newSpillDir("check")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	db, err := duck.Open(ctx, duck.Options{TempDirectory: tmp})
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = computedTypes(ctx, db, m, src)
	return err
}
