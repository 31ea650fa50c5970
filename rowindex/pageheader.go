package rowindex

import (
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/parquet-go/parquet-go/format"
)

// parsePageHeader is pqrow.ParsePageHeader (shared with the LZ4_RAW guard,
// which walks the same headers).
func parsePageHeader(b []byte) (format.PageHeader, int, error) { return pqrow.ParsePageHeader(b) }
