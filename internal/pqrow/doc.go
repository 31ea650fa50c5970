// Package pqrow owns the conversion between Parquet files and rows of Go
// values described by a Spark schema (*schema.Struct): the Spark ⇄ Parquet
// schema mapping as Spark writes it, a streaming reader that reconstructs
// nested values (including legacy list encodings), a writer, and the
// per-file statistics (numRecords, min, max, nullCount) that Delta Lake keeps
// in its "stats" JSON. Selective reads (MatchRows, ReadRowsAt) scan one key
// column with statistics, bloom filters and page indexes, then decode the
// other columns only at the matching rows (late materialization).
//
// The value model is documented on Row.
package pqrow
