package pqrow

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/testfixture"
)

// readBytes opens b and reads every row with the file's inferred schema.
func readBytes(b []byte) ([]Row, error) {
	f, err := OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, err
	}
	sch, err := f.Schema()
	if err != nil {
		return nil, err
	}
	var rows []Row
	for r, err := range f.Rows(context.Background(), sch, ReadOptions{}) {
		if err != nil {
			return rows, err
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// TestIntegrityLies: each thing a footer can promise and the pages not
// keep is refused with an *IntegrityError naming what lied; the truthful
// file reads in full.
func TestIntegrityLies(t *testing.T) {
	rows, err := readBytes(testfixture.Lying(t, 1000, testfixture.LieNone))
	if err != nil || len(rows) != 1000 {
		t.Fatalf("truthful file: %d rows, %v", len(rows), err)
	}
	want := map[string]string{
		testfixture.LieRows:         "pages hold fewer rows than the row group's 1005",
		testfixture.LieGroupRows:    "the footer gives 1000 values for 1005 rows",
		testfixture.LieNulls:        "pages hold 100 nulls, the footer counts 107",
		testfixture.LieRequiredNull: "the footer counts 2 nulls in a required column",
		testfixture.LieMax:          "a value above the footer's maximum",
		testfixture.LieMin:          "a value below the footer's minimum",
		testfixture.LieOffset:       "the footer places the chunk at bytes",
	}
	for _, lie := range testfixture.Lies {
		t.Run(lie, func(t *testing.T) {
			_, err := readBytes(testfixture.Lying(t, 1000, lie))
			var ie *IntegrityError
			if !errors.As(err, &ie) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %v, want an *IntegrityError", err)
			}
			if !strings.Contains(ie.What, want[lie]) {
				t.Errorf("what = %q, want %q", ie.What, want[lie])
			}
		})
	}
}

// TestBadData47662: the footer of ARROW-GH-47662 counts 105 nulls in a
// required column whose short pages parquet-go would pad with zeros; it
// is refused on open.
func TestBadData47662(t *testing.T) {
	_, _, err := readAll(t, testfixture.BadData47662())
	var ie *IntegrityError
	if !errors.As(err, &ie) || ie.Column != "flba_field" || ie.RowGroup != 0 || !strings.Contains(ie.What, "105 nulls in a required column") {
		t.Fatalf("got %v", err)
	}
}

// TestBadData43605ReadsAsPyarrow: ARROW-GH-43605's corrupt RLE run decodes
// as zeros in pyarrow 26.0.1 too (21,186 rows, all 0, no nulls): read
// identically, which is all a reader can do without a footer to contradict.
func TestBadData43605ReadsAsPyarrow(t *testing.T) {
	rows, _, err := readAll(t, filepath.Join(parquetTesting, "bad_data", "ARROW-GH-43605.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 21186 {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		if r[0] != int32(0) {
			t.Fatalf("row %d = %#v, pyarrow reads 0", i, r[0])
		}
	}
}
