package ariadne

import (
	"context"
	"errors"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/delta"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/sparkengine"
	"github.com/ariadne-go/ariadne/store"
)

// ErrorKind names the kind of err with a stable word that programs branch
// on instead of message text (the command line's --json "kind" and the
// server's error.kind): an aerr kind ("invalid argument", "index not
// found", ...), else the sentinel of the package that reported it ("row
// index not found", "bad query", "not found", ...), else "error".
func ErrorKind(err error) string {
	if k := aerr.KindOf(err); k != nil {
		return k.Error()
	}
	for _, s := range kinds {
		if errors.Is(err, s.sentinel) {
			return s.kind
		}
	}
	return "error"
}

var kinds = []struct {
	sentinel error
	kind     string
}{
	{store.ErrNotExist, "not found"},
	{store.ErrInvalidKey, "invalid key"},
	{store.ErrPrecondition, "precondition failed"},
	{store.ErrStorage, "storage"},
	{delta.ErrNotATable, "not a delta table"},
	{delta.ErrVersionNotFound, "version not found"},
	{delta.ErrCorruptLog, "corrupt log"},
	{delta.ErrUnsupportedFeature, "unsupported feature"},
	{delta.ErrConflict, "conflict"},
	{pqrow.ErrCorrupt, "corrupt file"},
	{fileindex.ErrUnsupportedFunction, "unsupported function"},
	{datafile.ErrCorruptFile, "corrupt file"},
	{pqrow.ErrSchemaMismatch, "schema mismatch"},
	{pqrow.ErrUnsupported, "unsupported"},
	{datafile.ErrUnsupported, "unsupported"},
	{datafile.ErrMalformedRecord, "malformed record"},
	{fileindex.ErrComputedExpression, "computed expression"},
	{metadata.ErrConcurrentUpdate, "concurrent update"},
	{prepared.ErrMemoryBudget, "memory budget"},
	{rowindex.ErrNotFound, "row index not found"},
	{rowindex.ErrExists, "row index exists"},
	{rowindex.ErrConcurrentUpdate, "concurrent update"},
	{rowindex.ErrStaleAggregates, "stale aggregates"},
	{rowindex.ErrDataFileChanged, "data file changed"},
	{rowindex.ErrNotParquet, "not parquet"},
	{rowindex.ErrBadQuery, "bad query"},
	{rowindex.ErrBadKeyColumn, "bad column"},
	{rowindex.ErrCorrupt, "corrupt row index"},
	{sparkengine.ErrSpark, "spark engine"},
	{context.Canceled, "canceled"},
	{context.DeadlineExceeded, "deadline exceeded"},
}
