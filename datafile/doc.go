// Package datafile owns reading users' data files (CSV, JSON and Parquet on
// any store) the way the Spark library's reader does: with the index's
// stored schema (never inferred), the stored read options (Spark option
// names), and a projection of top-level columns, yielding rows in the pqrow
// value model in bounded batches.
//
// Every format is streamed: CSV and JSON from one sequential ranged read of
// the object (multi-line JSON arrays element by element), Parquet page by
// page through pqrow, so memory is bounded by the batch size and the widest
// record, never by the file size.
//
// Spark semantics reproduced here (see docs/datafiles.md for the full list
// and the known differences): CSV is positional against the schema, with
// header, sep, quote, escape, comment, nullValue, emptyValue, mode
// (PERMISSIVE, DROPMALFORMED, FAILFAST), timestampFormat, dateFormat and
// multiLine; JSON matches fields by name (case-sensitive), coerces numbers
// to the schema type, and reads multiLine documents; Parquet matches columns
// by name and reads missing columns as null.
//
// Computed columns and the exploded read transform are not applied here:
// they are SQL run in internal/duck over the rows this package yields
// (see Relation, which streams many files as one relation with their
// filename column).
package datafile
