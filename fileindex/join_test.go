package fileindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/schema"
)

// drain reads a join result to the end and returns its column names and
// rows rendered as strings, sorted.
func drain(t *testing.T, r *Result) ([]string, []string) {
	t.Helper()
	defer r.Close()
	var out []string
	for {
		b, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range b {
			out = append(out, fmt.Sprint(row))
		}
	}
	sort.Strings(out)
	return r.Schema().Names(), out
}

func keys(names string, typ []schema.Type, rows ...[]any) KeySource {
	var fields []schema.Field
	for i, n := range splitComma(names) {
		fields = append(fields, schema.Field{Name: n, Type: typ[i], Nullable: true})
	}
	return RowsSource(&schema.Struct{Fields: fields}, rows)
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

var intInt = []schema.Type{schema.Integer, schema.Integer}

// TestJoin follows §8.8 "Join" and §8.16 over table1 indexed on Id and
// Version: counts, column order (USING semantics) and identical schemas
// whether or not files were located.
func TestJoin(t *testing.T) {
	ctx := context.Background()
	ti := table1Index(t, func(ix *index.Index) error {
		if err := ix.AddIndex(ctx, "Id"); err != nil {
			return err
		}
		return ix.AddIndex(ctx, "Version")
	})
	table2 := func() KeySource { return keys("Id,Version", intInt, []any{int32(1), int32(3)}) }
	for _, tc := range []struct {
		name      string
		keys      func() KeySource
		on        []string
		how       JoinType
		indexLeft bool
		sel       []string
		cols      []string
		rows      int
	}{
		{"table2 semi", table2, []string{"Version", "Id"}, Semi, false, nil, []string{"Version", "Id"}, 1},
		// Only P1 is located: 1 matched + 3 unmatched index rows.
		{"table2 full on Version", table2, []string{"Version"}, Full, false, nil, []string{"Version", "Id", "Id", "Value"}, 4},
		{"table2 full on Version,Id", table2, []string{"Version", "Id"}, Full, false, nil, []string{"Version", "Id", "Value"}, 4},
		{"index semi", table2, []string{"Version", "Id"}, Semi, true, nil, []string{"Version", "Id", "Value"}, 1},
		// Spark puts the join column first in a semi/anti join too (0.1.8-beta
		// answered [s k g d ts] to an anti join on s with the index left).
		{"index anti on a later column", func() KeySource { return keys("Version", intInt[:1], []any{int32(1)}) },
			[]string{"Version"}, Anti, true, nil, []string{"Version", "Id", "Value"}, 4},
		{"index full on Version", table2, []string{"Version"}, "fullouter", true, nil, []string{"Version", "Id", "Value", "Id"}, 4},
		{"inner", func() KeySource {
			return keys("Id,Version", intInt, []any{int32(1), int32(1)}, []any{int32(2), int32(2)})
		}, []string{"Id", "Version"}, Inner, false, nil, []string{"Id", "Version", "Value"}, 1},
		{"inner index left", func() KeySource {
			return keys("Id,Version", intInt, []any{int32(1), int32(1)}, []any{int32(2), int32(1)})
		}, []string{"Id", "Version"}, Inner, true, nil, []string{"Id", "Version", "Value"}, 2},
		{"semi drops unmatched", func() KeySource {
			return keys("Id,Version", intInt, []any{int32(1), int32(1)}, []any{int32(2), int32(2)}, []any{int32(999), int32(999)})
		}, []string{"Id"}, "left_semi", false, nil, []string{"Id", "Version"}, 2},
		{"full outer with a missing key", func() KeySource {
			return keys("Id,Version", intInt, []any{int32(1), int32(1)}, []any{int32(999), int32(999)})
		}, []string{"Id"}, Full, false, nil, []string{"Id", "Version", "Version", "Value"}, 9},
		{"no match inner", func() KeySource { return keys("Id", intInt, []any{int32(999)}, []any{int32(998)}) },
			[]string{"Id"}, Inner, false, nil, []string{"Id", "Version", "Value"}, 0},
		{"no match left", func() KeySource { return keys("Id", intInt, []any{int32(999)}, []any{int32(998)}) },
			[]string{"Id"}, Left, false, nil, []string{"Id", "Version", "Value"}, 2},
		{"anti", func() KeySource { return keys("Id", intInt, []any{int32(4)}, []any{int32(998)}) },
			[]string{"Id"}, Anti, false, nil, []string{"Id"}, 1},
		{"select", table2, []string{"Version", "Id"}, Semi, true, []string{"Id", "Version"}, []string{"Version", "Id"}, 1},
		{"select on empty result", func() KeySource { return keys("Id", intInt, []any{int32(999)}) },
			[]string{"Id"}, Semi, true, []string{"Id", "Version"}, []string{"Id", "Version"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ti.fi.Join(ctx, tc.keys(), tc.on, tc.how, JoinOptions{Select: tc.sel, IndexOnLeft: tc.indexLeft})
			if err != nil {
				t.Fatal(err)
			}
			cols, rows := drain(t, r)
			if !slices.Equal(cols, tc.cols) || len(rows) != tc.rows {
				t.Errorf("got columns %v and %d rows %v, want %v and %d", cols, len(rows), rows, tc.cols, tc.rows)
			}
		})
	}
}

func TestJoinErrors(t *testing.T) {
	ctx := context.Background()
	ti := table1Index(t, func(ix *index.Index) error { return ix.AddIndex(ctx, "Id") })
	k := func() KeySource { return keys("Id,Version", intInt, []any{int32(1), int32(1)}) }
	for _, tc := range []struct {
		name string
		on   []string
		how  JoinType
		sel  []string
		kind *aerr.Kind
	}{
		{"no columns", nil, Inner, nil, aerr.ErrInvalidArgument},
		{"bad type", []string{"Id"}, "sideways", nil, aerr.ErrInvalidArgument},
		{"no indexed column", []string{"Version"}, Inner, nil, aerr.ErrInvalidArgument},
		{"unknown column", []string{"Nope"}, Inner, nil, aerr.ErrColumnNotFound},
		{"join column not selected", []string{"Id"}, Inner, []string{"Value"}, aerr.ErrColumnNotFound},
		{"unknown selected column", []string{"Id"}, Inner, []string{"Id", "NonExistent"}, aerr.ErrColumnNotFound},
		{"blank selected column", []string{"Id"}, Inner, []string{"Id", "  "}, aerr.ErrInvalidArgument},
		{"empty selection", []string{"Id"}, Inner, []string{}, aerr.ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ti.fi.Join(ctx, k(), tc.on, tc.how, JoinOptions{Select: tc.sel})
			if err == nil {
				r.Close()
			}
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want %v", err, tc.kind)
			}
		})
	}
	// The selection of one join does not stick to the next (§9 item 13).
	r, err := ti.fi.Join(ctx, k(), []string{"Id"}, Semi, JoinOptions{Select: []string{"Id"}, IndexOnLeft: true})
	if err != nil {
		t.Fatal(err)
	}
	if cols, _ := drain(t, r); !slices.Equal(cols, []string{"Id"}) {
		t.Fatalf("selected: %v", cols)
	}
	r, err = ti.fi.Join(ctx, k(), []string{"Id"}, Semi, JoinOptions{IndexOnLeft: true})
	if err != nil {
		t.Fatal(err)
	}
	if cols, _ := drain(t, r); !slices.Equal(cols, []string{"Id", "Version", "Value"}) {
		t.Fatalf("after a selected join: %v", cols)
	}
}

// TestJoinTemporal: §5.8 deduplication keeps each key's newest row.
func TestJoinTemporal(t *testing.T) {
	ctx := context.Background()
	ti := temporalIndex(t)
	r, err := ti.fi.Join(ctx, keys("Id", intInt, []any{int32(1)}, []any{int32(3)}, []any{int32(7)}), []string{"Id"}, Inner, JoinOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cols, rows := drain(t, r)
	want := []string{"[1 150 2024-06-15 12:00:00 +0000 UTC]", "[3 300 2024-01-15 10:00:00 +0000 UTC]"}
	if !slices.Equal(cols, []string{"Id", "Value", "UpdatedAt"}) || !slices.Equal(rows, want) {
		t.Fatalf("got %v %v, want %v", cols, rows, want)
	}
}

// TestJoinExploded: an exploded alias (§3.4) is joined on after the read
// transform explodes the array.
func TestJoinExploded(t *testing.T) {
	ctx := context.Background()
	const arraySchema = `{"type":"struct","fields":[{"name":"event_id","type":"string","nullable":true,"metadata":{}},{"name":"event_type","type":"string","nullable":true,"metadata":{}},{"name":"users","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}},{"name":"tags","type":{"type":"array","elementType":"string","containsNull":true},"nullable":true,"metadata":{}}]}`
	ti := newTestIndex(t, "arr", arraySchema, "json", map[string]string{"multiLine": "true"}, func(ix *index.Index) error {
		return ix.AddExplodedFieldIndex(ctx, "users", "id", "user_id")
	})
	newTestIndexer(t, ti, 500000).index(t, ti, dataURI(t, "array_test.json"))
	got, err := ti.fi.Locate(ctx, Query{"user_id": {int64(100), int64(101)}})
	if err != nil || len(got) != 1 {
		t.Fatalf("locate: %v, %v", got, err)
	}
	r, err := ti.fi.Join(ctx, keys("user_id", []schema.Type{schema.Long}, []any{int64(100)}), []string{"user_id"}, Inner, JoinOptions{Select: []string{"user_id", "event_id"}})
	if err != nil {
		t.Fatal(err)
	}
	cols, rows := drain(t, r)
	if !slices.Equal(cols, []string{"user_id", "event_id"}) || !slices.Equal(rows, []string{"[100 e1]", "[100 e3]"}) {
		t.Fatalf("got %v %v", cols, rows)
	}
}
