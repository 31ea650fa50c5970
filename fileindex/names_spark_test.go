package fileindex

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/schema"
)

// TestSparkNameResolution holds the answers the Spark library (0.1.8-beta
// on Spark 3.5, spark.sql.caseSensitive=false) gave on table1 with a
// regular index on Id and computed indexes c = "ID + 1", C2 = "version *
// 10" (measured through py4j; see docs/compatibility.md, "Column names and
// literals"): definitions name columns exactly, a locate resolves regular
// and computed columns without regard to case, a text literal is compared
// with the column as text, and a join names columns exactly and puts the
// join column first, then the index side's columns, then the keys'.
func TestSparkNameResolution(t *testing.T) {
	ctx := context.Background()
	ti := updatedIndex(t, updT1S, func(ix *index.Index) error {
		if err := ix.AddIndex(ctx, "id"); !errors.Is(err, aerr.ErrColumnNotFound) {
			t.Errorf("addIndex(id) on column Id: %v, want column not found (the library: ColumnNotFoundException)", err)
		}
		if err := ix.AddIndex(ctx, "Id"); err != nil {
			return err
		}
		if err := ix.AddComputedIndex(ctx, "c", "ID + 1"); err != nil {
			return err
		}
		return ix.AddComputedIndex(ctx, "C2", "version * 10")
	}, "table1_part0.csv", "table1_part1.csv")
	p0, p1 := "table1_part0.csv", "table1_part1.csv"
	for _, tc := range []struct {
		col  string
		val  any
		want []string // nil: an error
	}{
		{"Id", int32(4), []string{p1}},
		{"id", int32(4), []string{p1}},
		{"ID", int32(4), []string{p1}},
		{"Id", "4", []string{p1}},
		{"Id", "04", []string{}},
		{"Id", " 4", []string{}},
		{"Id", 4.0, []string{p1}},
		{"Id", "4.0", []string{}},
		{"c", int32(5), []string{p1}},
		{"C", int32(5), []string{p1}},
		{"c", "5", []string{p1}},
		{"C2", int32(10), []string{p0, p1}},
		{"c2", int32(10), []string{p0, p1}},
		{"Value", 4.5, nil},
		{"value", 4.5, nil},
	} {
		got, err := ti.fi.Locate(ctx, Query{tc.col: {tc.val}})
		if tc.want == nil {
			if !errors.Is(err, aerr.ErrColumnNotFound) {
				t.Errorf("locate %s=%#v: %v, %v; want column not found", tc.col, tc.val, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("locate %s=%#v: %v", tc.col, tc.val, err)
			continue
		}
		base := []string{}
		for _, f := range got {
			base = append(base, filepath.Base(f))
		}
		slices.Sort(base)
		if !slices.Equal(base, tc.want) {
			t.Errorf("locate %s=%#v: %v, want %v (the library's answer)", tc.col, tc.val, base, tc.want)
		}
	}
	// Joins: names exact; the join column first, then the index side's
	// columns (stored schema, computed in definition order), then the keys'.
	// index.join(df) was measured; df.join(index) is spec §5.7's USING
	// order with the keys on the left.
	for _, tc := range []struct {
		keyCols   string
		on        string
		indexLeft bool
		cols      string // "" = an error
	}{
		{"Id,tag", "Id", true, "Id,Version,Value,c,C2,tag"},
		{"c,tag", "c", true, "c,Id,Version,Value,C2,tag"},
		{"Id,tag", "Id", false, "Id,tag,Version,Value,c,C2"},
		{"id,tag", "id", true, ""},
		{"C,tag", "C", true, ""},
		{"ID,tag", "ID", false, ""},
	} {
		r, err := ti.fi.Join(ctx, keys(tc.keyCols, []schema.Type{schema.Integer, schema.String}, []any{int32(4), "x"}), []string{tc.on}, Inner, JoinOptions{IndexOnLeft: tc.indexLeft})
		if tc.cols == "" {
			if err == nil {
				r.Close()
				t.Errorf("join on %s: no error (the library refuses it)", tc.on)
			}
			continue
		}
		if err != nil {
			t.Errorf("join on %s: %v", tc.on, err)
			continue
		}
		cols, rows := drain(t, r)
		if strings.Join(cols, ",") != tc.cols || len(rows) != 2 {
			t.Errorf("join on %s: columns %v, %d rows; the library gives %s and 2 rows", tc.on, cols, len(rows), tc.cols)
		}
	}
}
