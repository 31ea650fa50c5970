package datafile

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
)

// FilenameColumn is the name of the column that carries each row's source
// file URI in the index's relations (spec §5.3.4: "filename").
const FilenameColumn = "filename"

// Relation streams the rows of many files, read with one Plan, as one
// relation whose last column (or, as Spark's withColumn does, the existing
// column of that name) is the file's URI. It is the input the file index
// feeds to DuckDB (spec §5.9 step 1 plus the filename column of §5.3.4).
//
// Files are read one after another, each with bounded memory; rows of one
// file are contiguous and files come in the given order. A Relation is not
// safe for concurrent use. Errors are *FileError naming the failing file;
// reading stops at the first one.
type Relation struct {
	plan   *Plan
	res    Resolver
	uris   []string
	col    int // position of the filename column
	schema *schema.Struct

	next int     // index of the next file to open
	cur  *Reader // the file being read
	err  error   // sticky
}

// NewRelation returns a relation over uris (trimmed; blank names are
// dropped, spec §5.9 step 1) with the filename column named filenameCol
// ("" means FilenameColumn). If the projected schema already has a column
// of that name it is replaced in place, otherwise the column is appended.
func NewRelation(plan *Plan, res Resolver, uris []string, filenameCol string) *Relation {
	if filenameCol == "" {
		filenameCol = FilenameColumn
	}
	var clean []string
	for _, u := range uris {
		if u = strings.TrimSpace(u); u != "" {
			clean = append(clean, u)
		}
	}
	st := &schema.Struct{Fields: append([]schema.Field(nil), plan.proj.Fields...)}
	col := fieldIndex(st, filenameCol)
	fcol := schema.Field{Name: filenameCol, Type: schema.String, Nullable: false}
	if col >= 0 {
		st.Fields[col] = fcol
	} else {
		col = len(st.Fields)
		st.Fields = append(st.Fields, fcol)
	}
	return &Relation{plan: plan, res: res, uris: clean, col: col, schema: st}
}

// Schema returns the relation's schema: the projected columns and the
// filename column.
func (r *Relation) Schema() *schema.Struct { return r.schema }

// Files returns the URIs the relation reads, in order.
func (r *Relation) Files() []string { return r.uris }

// Next returns the next batch of rows (never empty), all from one file, or
// (nil, io.EOF) after the last file.
func (r *Relation) Next(ctx context.Context) ([]pqrow.Row, error) {
	for r.err == nil {
		if r.cur == nil {
			if r.next >= len(r.uris) {
				r.err = io.EOF
				break
			}
			uri := r.uris[r.next]
			r.next++
			rd, err := r.plan.Open(ctx, r.res, uri)
			if err != nil {
				r.err = err
				break
			}
			r.cur = rd
		}
		batch, err := r.cur.Next(ctx)
		if err == io.EOF {
			r.cur.Close()
			r.cur = nil
			continue
		}
		if err != nil {
			r.err = err
			break
		}
		uri := r.cur.URI()
		for i, row := range batch {
			batch[i] = r.withFilename(row, uri)
		}
		return batch, nil
	}
	return nil, r.err
}

func (r *Relation) withFilename(row pqrow.Row, uri string) pqrow.Row {
	if r.col < len(row) {
		row[r.col] = uri
		return row
	}
	return append(row, uri)
}

// Close releases the file being read, if any.
func (r *Relation) Close() error {
	var err error
	if r.cur != nil {
		err = r.cur.Close()
		r.cur = nil
	}
	if r.err == nil {
		r.err = errors.New("datafile: relation closed")
	}
	return err
}
