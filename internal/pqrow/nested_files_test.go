package pqrow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestNestedFiles checks the reconstructed values of parquet-testing files
// with nested data in standard, legacy 2-level and unannotated repeated
// encodings (rows rendered with fmt.Sprint).
func TestNestedFiles(t *testing.T) {
	tests := []struct {
		file, schema string
		rows         []string
	}{
		{"nested_lists.snappy.parquet", "struct<a:array<array<array<string>>>,b:int>", []string{
			"[[[[a b] [c]] [<nil> [d]]] 1]",
			"[[[[a b] [c d]] [<nil> [e]]] 1]",
			"[[[[a b] [c d] [e]] [<nil> [f]]] 1]"}},
		{"old_list_structure.parquet", "struct<a:array<array<int>>>", []string{"[[[1 2] [3 4]]]"}},
		{"repeated_no_annotation.parquet", "struct<id:int,phoneNumbers:struct<phone:array<struct<number:bigint,kind:string>>>>", []string{
			"[1 <nil>]", "[2 <nil>]", "[3 [[]]]", "[4 [[[5555555555 <nil>]]]]", "[5 [[[1111111111 home]]]]",
			"[6 [[[1111111111 home] [2222222222 <nil>] [3333333333 mobile]]]]"}},
		{"repeated_primitive_no_list.parquet", "struct<Int32_list:array<int>,String_list:array<string>,group_of_lists:struct<Int32_list_in_group:array<int>,String_list_in_group:array<string>>>", []string{
			"[[0 1 2 3] [foo zero one two] [[0 1 2 3] [foo zero one two]]]",
			"[[] [three] [[] [three]]]",
			"[[4] [four] [[4] [four]]]",
			"[[5 6 7 8] [five six seven eight] [[5 6 7 8] [five six seven eight]]]"}},
		{"nested_maps.snappy.parquet", "struct<a:map<string,map<int,boolean>>,b:int,c:double>", []string{
			"[[{a [{1 true} {2 false}]}] 1 1]", "[[{b [{1 true}]}] 1 1]", "[[{c <nil>}] 1 1]",
			"[[{d []}] 1 1]", "[[{e [{1 true}]}] 1 1]", "[[{f [{3 true} {4 false} {5 true}]}] 1 1]"}},
		{"list_columns.parquet", "struct<int64_list:array<bigint>,utf8_list:array<string>>", []string{
			"[[1 2 3] [abc efg hij]]", "[[<nil> 1] <nil>]", "[[4] [efg <nil> hij xyz]]"}},
		{"null_list.parquet", "struct<emptylist:array<null>>", []string{"[[]]"}},
		{"nonnullable.impala.parquet", "struct<ID:bigint,Int_Array:array<int>,int_array_array:array<array<int>>,Int_Map:map<string,int>,int_map_array:array<map<string,int>>,nested_Struct:struct<a:int,B:array<int>,c:struct<D:array<array<struct<e:int,f:string>>>>,G:map<string,struct<h:struct<i:array<double>>>>>>", []string{
			"[8 [-1] [[-1 -2] []] [{k1 -1}] [[] [{k1 1}] [] []] [-1 [-1] [[[[-1 nonnullable]]]] []]]"}},
		{"map_no_value.parquet", "struct<my_map:map<int,int>,my_map_no_v:map<int,null>,my_list:array<int>>", []string{
			"[[{1 <nil>} {2 <nil>} {3 <nil>}] [{1 <nil>} {2 <nil>} {3 <nil>}] [1 2 3]]",
			"[[{4 <nil>} {5 <nil>} {6 <nil>}] [{4 <nil>} {5 <nil>} {6 <nil>}] [4 5 6]]",
			"[[{7 <nil>} {8 <nil>} {9 <nil>}] [{7 <nil>} {8 <nil>} {9 <nil>}] [7 8 9]]"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			rows, f, err := readAll(t, filepath.Join(parquetTesting, "data", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			st, _ := f.Schema()
			if st.String() != tc.schema {
				t.Errorf("schema %s\nwant   %s", st, tc.schema)
			}
			got := make([]string, len(rows))
			for i, r := range rows {
				got[i] = fmt.Sprint(r)
			}
			if !slices.Equal(got, tc.rows) {
				t.Errorf("rows\n%q\nwant\n%q", got, tc.rows)
			}
		})
	}
}

// TestInt96FromSpark: INT96 timestamps decode to UTC microseconds; a value
// whose microseconds overflow int64 is refused (Spark's multiplyExact
// fails on it too).
func TestInt96FromSpark(t *testing.T) {
	rows, _, err := readAll(t, filepath.Join(parquetTesting, "data", "int96_from_spark.parquet"))
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("err = %v, want ErrUnsupported for the out-of-range last value", err)
	}
	want := []any{
		time.Date(2024, 1, 1, 20, 34, 56, 123456000, time.UTC),
		time.Date(2024, 1, 1, 1, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 3, 0, 0, 0, time.UTC),
		time.Date(2024, 12, 30, 23, 0, 0, 0, time.UTC),
		nil,
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows before the error, want %d", len(rows), len(want))
	}
	for i, w := range want {
		if !Equal(rows[i][0], w) {
			t.Errorf("row %d = %v, want %v", i, rows[i][0], w)
		}
	}
}

// TestTruncatedFile: every prefix of a valid file fails with ErrCorrupt
// (at open or while reading), never a panic.
func TestTruncatedFile(t *testing.T) {
	st := mustParse(t, allTypesSchema)
	path, _ := writeFile(t, st, allTypesRows(), WriterOptions{})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(data); n += max(1, len(data)/200) {
		b := data[:n]
		f, err := OpenFile(bytesReaderAt(b), int64(len(b)))
		if err == nil {
			for _, err = range f.Rows(context.Background(), st, ReadOptions{}) {
				if err != nil {
					break
				}
			}
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("prefix of %d bytes: err = %v, want ErrCorrupt", n, err)
		}
	}
	// Flipped bytes in the middle: an error or a successful read, never a panic.
	for i := 4; i < len(data)-8; i += max(1, len(data)/300) {
		b := slices.Clone(data)
		b[i] ^= 0xff
		f, err := OpenFile(bytesReaderAt(b), int64(len(b)))
		if err != nil {
			continue
		}
		for _, err := range f.Rows(context.Background(), st, ReadOptions{}) {
			if err != nil {
				if !isTyped(err) {
					t.Fatalf("byte %d flipped: untyped error %v", i, err)
				}
				break
			}
		}
	}
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, fmt.Errorf("read at %d past %d: %w", off, len(b), errEOF)
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, errEOF
	}
	return n, nil
}

var errEOF = io.EOF
