package fileindex

import (
	"context"
	"database/sql"

	"github.com/ariadne-go/ariadne/internal/duck"
)

// SQLSource returns a KeySource over a database/sql result, so that a
// DuckDB relation — a query on the caller's own duckdb-go database, say
// `SELECT user_id FROM sessions WHERE day = ?` — can be joined with an
// index: column types are read from the driver's DuckDB type names
// (INTEGER, VARCHAR, DECIMAL(p,s), lists, structs, maps) and values
// converted to the row model. It takes ownership of rows and closes them at
// the end of the stream or on error.
func SQLSource(rows *sql.Rows) (KeySource, error) {
	r, err := duck.FromSQLRows(rows, "keys")
	if err != nil {
		rows.Close()
		return nil, err
	}
	return sqlKeys{r}, nil
}

type sqlKeys struct{ *duck.Rows }

func (k sqlKeys) Next(ctx context.Context) ([][]any, error) {
	rows, err := k.Rows.Next(ctx)
	if err != nil {
		k.Rows.Close()
		return nil, err
	}
	return rows, nil
}
