package index

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
)

// defSchema has a column for every index type plus an array of structs.
const defSchema = `{"type":"struct","fields":[` +
	`{"name":"Id","type":"integer","nullable":true,"metadata":{}},` +
	`{"name":"Name","type":"string","nullable":true,"metadata":{}},` +
	`{"name":"Ts","type":"timestamp","nullable":true,"metadata":{}},` +
	`{"name":"meta","type":{"type":"struct","fields":[{"name":"updatedAt","type":"timestamp","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},` +
	`{"name":"users","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"id","type":"integer","nullable":true,"metadata":{}}]},"containsNull":true},"nullable":true,"metadata":{}}]}`

// adders registers key as each of the six types.
var adders = []struct {
	name string
	add  func(ix *Index, key string) error
}{
	{"regular", func(ix *Index, k string) error { return ix.AddIndex(context.Background(), k) }},
	{"computed", func(ix *Index, k string) error { return ix.AddComputedIndex(context.Background(), k, "upper(Name)") }},
	{"exploded field", func(ix *Index, k string) error {
		return ix.AddExplodedFieldIndex(context.Background(), "users", "id", k)
	}},
	{"bloom", func(ix *Index, k string) error { return ix.AddBloomIndex(context.Background(), k, 0.01) }},
	{"temporal", func(ix *Index, k string) error { return ix.AddTemporalIndex(context.Background(), k, "Ts") }},
	{"range", func(ix *Index, k string) error { return ix.AddRangeIndex(context.Background(), k) }},
}

func article(t string) string {
	if t == "exploded field" {
		return "an"
	}
	return "a"
}

func TestExclusivityAllPairs(t *testing.T) {
	ctx := context.Background()
	cat, _ := testCatalog(t)
	n := 0
	for _, first := range adders {
		for _, second := range adders {
			if first.name == second.name {
				continue
			}
			n++
			name := fmt.Sprintf("x%d", n)
			ix, err := cat.Open(ctx, name, OpenOptions{Schema: mustSchema(t, defSchema), Format: "json"})
			if err != nil {
				t.Fatal(err)
			}
			// "Id" exists in the schema, so every type accepts it alone.
			if err := first.add(ix, "Id"); err != nil {
				t.Fatalf("%s: %v", first.name, err)
			}
			err = second.add(ix, "Id")
			want := fmt.Sprintf("Column 'Id' is already %s %s index. A column cannot be both %s %s index and %s %s index.",
				article(first.name), first.name, article(second.name), second.name, article(first.name), first.name)
			if !errors.Is(err, aerr.ErrInvalidArgument) || err.Error() != want {
				t.Errorf("%s then %s:\n got %v\nwant %s", first.name, second.name, err, want)
			}
		}
	}
	if n != 30 {
		t.Fatalf("checked %d pairs", n)
	}
}

func TestIdempotenceAndChecks(t *testing.T) {
	ctx := context.Background()
	cat, dir := testCatalog(t)
	ix, err := cat.Open(ctx, "defs", OpenOptions{Schema: mustSchema(t, defSchema), Format: "json"})
	if err != nil {
		t.Fatal(err)
	}
	// Regular, bloom, temporal and range keys must exist in the schema;
	// computed names and exploded aliases are new columns and need not.
	for _, a := range adders {
		if a.name == "computed" || a.name == "exploded field" {
			continue
		}
		if err := a.add(ix, "Missing"); !errors.Is(err, aerr.ErrColumnNotFound) {
			t.Errorf("%s on a column missing from the schema: want ColumnNotFound, got %v", a.name, err)
		}
	}
	if err := ix.AddBloomIndex(ctx, "Name", 0.001); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, dir+"/indexes/defs/metadata.json")
	if err := ix.AddBloomIndex(ctx, "Name", 0.5); err != nil {
		t.Fatal(err)
	}
	if readFile(t, dir+"/indexes/defs/metadata.json") != before {
		t.Fatal("idempotent re-add wrote metadata")
	}
	if m := ix.Metadata(); len(m.BloomIndexes) != 1 || m.BloomIndexes[0].FPR != 0.001 {
		t.Fatalf("bloom re-add changed the FPR: %+v", m.BloomIndexes)
	}
	for _, fpr := range []float64{0, 1, -0.1} {
		if err := ix.AddBloomIndex(ctx, "Id", fpr); !errors.Is(err, aerr.ErrInvalidArgument) {
			t.Errorf("fpr %v: %v", fpr, err)
		}
	}
	for _, tc := range []struct {
		err  error
		want *aerr.Kind
		msg  string
	}{
		{ix.AddIndex(ctx, " "), aerr.ErrInvalidArgument, ""},
		{ix.AddIndex(ctx, "_ariadne_batch_id"), aerr.ErrInvalidArgument, "reserved for Ariadne staging metadata"},
		{ix.AddIndex(ctx, "meta.updatedAt"), aerr.ErrInvalidArgument, "Nested column 'meta.updatedAt'"},
		{ix.AddTemporalIndex(ctx, "meta.updatedAt", "Ts"), aerr.ErrInvalidArgument, "temporal index"},
		{ix.AddTemporalIndex(ctx, "Id", "nope"), aerr.ErrColumnNotFound, ""},
		{ix.AddExplodedFieldIndex(ctx, "Name", "x", "n_x"), aerr.ErrInvalidArgument, "is StringType, not ArrayType"},
		{ix.AddExplodedFieldIndex(ctx, "nope", "x", "n_x"), aerr.ErrColumnNotFound, ""},
	} {
		if !errors.Is(tc.err, tc.want) || !strings.Contains(fmt.Sprint(tc.err), tc.msg) {
			t.Errorf("got %v, want %v containing %q", tc.err, tc.want, tc.msg)
		}
	}
	// A nested timestamp path is allowed; _ariadne_ts is not reserved.
	if err := ix.AddTemporalIndex(ctx, "Id", "meta.updatedAt"); err != nil {
		t.Fatal(err)
	}
	if err := ix.AddIndex(ctx, "_ariadne_ts"); !errors.Is(err, aerr.ErrColumnNotFound) {
		t.Fatalf("_ariadne_ts must pass the reserved check and fail the schema check, got %v", err)
	}
	if err := ix.AddExplodedFieldIndex(ctx, "users", "id", "user_id"); err != nil {
		t.Fatal(err)
	}
	if err := ix.AddComputedIndex(ctx, "name_upper", "upper(Name)"); err != nil {
		t.Fatal(err)
	}
	got := ix.Indexes()
	slices.Sort(got)
	if want := []string{"Id", "Name", "name_upper", "user_id"}; !slices.Equal(got, want) {
		t.Fatalf("Indexes() = %v, want %v", got, want)
	}
	// The definitions persist for a fresh handle.
	again, _ := cat.Get(ctx, "defs")
	if g := again.Indexes(); len(g) != 4 {
		t.Fatal(g)
	}
}
