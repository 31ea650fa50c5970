package prepared

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/internal/testfixture"
	"github.com/ariadne-go/ariadne/store"
)

func keys(t *testing.T, st store.Store) []string {
	t.Helper()
	var out []string
	for info, err := range st.List(context.Background(), store.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, info.Key)
	}
	return out
}

// TestBadInput: each bad input is a typed error and leaves nothing behind.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	evs := genEvents(3, 5000)
	for _, c := range []struct {
		name string
		opts Options
		kind error
	}{
		{"unknown key", Options{Key: "nope"}, aerr.ErrColumnNotFound},
		{"unknown sort column", Options{Key: "user", Sort: []string{"nope"}}, aerr.ErrColumnNotFound},
		{"repeated key column", Options{Key: "tags"}, aerr.ErrInvalidArgument},
		{"key also a sort column", Options{Key: "user", Sort: []string{"ts", "user"}}, aerr.ErrInvalidArgument},
		{"no key", Options{}, aerr.ErrInvalidArgument},
		{"page bytes out of range", Options{Key: "user", PageBytes: -2}, aerr.ErrInvalidArgument},
		{"one key over the budget, one page per key", Options{Key: "user", PageBytes: PageBytesPerKey, MemoryBytes: 100_000}, ErrMemoryBudget},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := fileStore(t)
			schema, rows := eventRows(t, evs)
			_, err := Write(ctx, st, "out/f.parquet", schema, rows, c.opts)
			if !errors.Is(err, c.kind) {
				t.Fatalf("error %v, want kind %v", err, c.kind)
			}
			if c.kind == ErrMemoryBudget {
				var be *BudgetError
				if !errors.As(err, &be) || be.Budget != 50_000 || be.Need <= be.Budget {
					t.Errorf("budget error %+v", be)
				}
			}
			if k := keys(t, st); len(k) != 0 {
				t.Errorf("left behind: %v", k)
			}
		})
	}
}

// TestNoOverwrite: an existing file is kept unless Overwrite is set.
func TestNoOverwrite(t *testing.T) {
	ctx := context.Background()
	st := fileStore(t)
	if err := store.WriteAll(ctx, st, "f.parquet", []byte("old"), nil); err != nil {
		t.Fatal(err)
	}
	schema, rows := eventRows(t, genEvents(4, 100))
	if _, err := Write(ctx, st, "f.parquet", schema, rows, Options{Key: "user"}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("error %v, want store.ErrPrecondition", err)
	}
	if b, _ := store.ReadAll(ctx, st, "f.parquet"); string(b) != "old" {
		t.Fatal("the existing file was replaced")
	}
	schema, rows = eventRows(t, genEvents(4, 100))
	if _, err := Write(ctx, st, "f.parquet", schema, rows, Options{Key: "user", Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if f, _ := openFile(t, st, "f.parquet"); f.NumRows() != 100 {
		t.Fatalf("%d rows", f.NumRows())
	}
}

// other is a record whose schema differs from event's.
type other struct {
	User int64 `parquet:"user"`
}

// TestSchemaMismatch: sources of different schemas are an
// aerr.ErrSchemaMismatch, found by the first pass before anything is
// written.
func TestSchemaMismatch(t *testing.T) {
	ctx := context.Background()
	src := fileStore(t)
	w := func(key string, v any) {
		t.Helper()
		sw, err := src.NewWriter(ctx, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		switch v := v.(type) {
		case []event:
			err = parquet.Write(sw, v)
		case []other:
			err = parquet.Write(sw, v)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	w("lake/date=1/a.parquet", genEvents(5, 300))
	w("lake/date=2/a.parquet", []other{{1}, {2}})
	res := storeResolver{src}
	srcs, err := Sources(ctx, res, []string{"lake"})
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0] != (Source{"lake/date=1/a.parquet", "date=1"}) {
		t.Fatalf("sources %v", srcs)
	}
	dst := fileStore(t)
	var written int
	_, err = PrepareFiles(ctx, res, srcs, dst, Options{Key: "user", Buckets: 2, Progress: func(p Progress) {
		if p.Phase == "write" {
			written = p.Done
		}
	}})
	if !errors.Is(err, aerr.ErrSchemaMismatch) {
		t.Fatalf("error %v, want a schema mismatch", err)
	}
	if written != 0 {
		t.Fatalf("%d files written before the mismatch was found", written)
	}
	if k := keys(t, dst); len(k) != 0 {
		t.Errorf("left behind: %v", k)
	}
}

// storeResolver resolves every URI to a key of one store.
type storeResolver struct{ st store.Store }

func (r storeResolver) Resolve(_ context.Context, uri string) (store.Store, string, error) {
	return r.st, uri, nil
}

// TestLyingSourceRefused: a source whose pages contradict its footer
// (parquet-testing's ARROW-GH-47662, and files whose footers were
// rewritten to lie about rows, nulls or min/max) fails the prepare with
// aerr.ErrCorruptDataFile naming it, and nothing is left in the output.
func TestLyingSourceRefused(t *testing.T) {
	ctx := context.Background()
	b47662, err := os.ReadFile(testfixture.BadData47662())
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{"ARROW-GH-47662.parquet": b47662}
	for _, lie := range testfixture.Lies {
		cases["lie-"+lie+".parquet"] = testfixture.Lying(t, 3000, lie)
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			src, dst := fileStore(t), fileStore(t)
			srcs := []Source{{URI: name}}
			key := "flba_field"
			if !strings.HasPrefix(name, "ARROW") {
				// A truthful file first, so that rows are already flowing
				// when the lie is found.
				key = "id"
				if err := store.WriteAll(ctx, src, "a-ok.parquet", testfixture.Lying(t, 3000, testfixture.LieNone), nil); err != nil {
					t.Fatal(err)
				}
				srcs = append([]Source{{URI: "a-ok.parquet"}}, srcs...)
			}
			if err := store.WriteAll(ctx, src, name, b, nil); err != nil {
				t.Fatal(err)
			}
			_, err := PrepareFiles(ctx, storeResolver{src}, srcs, dst, Options{Key: key, Buckets: 2})
			if aerr.KindOf(err) != aerr.ErrCorruptDataFile || !strings.Contains(err.Error(), name) {
				t.Fatalf("error %v, want a corrupt data file error naming %s", err, name)
			}
			if k := keys(t, dst); len(k) != 0 {
				t.Errorf("left behind: %v", k)
			}
		})
	}
}
