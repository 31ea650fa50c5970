// Package duck owns Ariadne's embedded SQL engine: an in-memory DuckDB
// (github.com/duckdb/duckdb-go/v2) opened with explicit settings, fed with
// rows that our own readers produce (DuckDB never opens users' files: they
// may live on S3, GCS or Azure, and its httpfs extension is not used), and
// queried back into rows of the pqrow value model with a Spark schema.
//
// It also owns the SQL text the file index generates: identifier and
// literal quoting that hostile names and values cannot escape, the mapping
// between Spark and DuckDB types, and the translation of the Spark SQL
// subset that computed indexes use (see Translate).
//
// DuckDB is a large cgo library; only this package links it, so packages
// that do not run SQL do not pay for it.
package duck
