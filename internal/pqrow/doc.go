// Package pqrow owns the conversion between Parquet files and rows of Go
// values described by a Spark schema (*schema.Struct): the Spark ⇄ Parquet
// schema mapping as Spark writes it, a streaming reader that reconstructs
// nested values (including legacy list encodings), a writer, and the
// per-file statistics (numRecords, min, max, nullCount) that Delta Lake keeps
// in its "stats" JSON.
//
// The value model is documented on Row.
package pqrow
