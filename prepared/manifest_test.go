package prepared

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/store"
)

// prepareSource writes one source of 3 buckets' worth of rows and returns
// its resolver and sources.
func prepareSource(t *testing.T) (Resolver, []Source) {
	t.Helper()
	ctx := context.Background()
	src := fileStore(t)
	sw, err := src.NewWriter(ctx, "in/a.parquet", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := parquet.Write(sw, genEvents(40, 3000)); err != nil {
		t.Fatal(err)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	res := storeResolver{src}
	srcs, err := Sources(ctx, res, []string{"in"})
	if err != nil {
		t.Fatal(err)
	}
	return res, srcs
}

// contents maps every object of st to its bytes, the manifest left out
// (it carries a time).
func contents(t *testing.T, st store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range keys(t, st) {
		if k == ManifestKey {
			continue
		}
		b, err := store.ReadAll(context.Background(), st, k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(b)
	}
	return out
}

// TestPrepareCrashAtEachStep: a prepare killed after each of its writes
// (the pending marker, each bucket file, the manifest) leaves an output that
// ReadManifest reports as unfinished until the manifest is written; a
// re-run over it says so, finishes, and leaves exactly what an uninterrupted
// run leaves.
func TestPrepareCrashAtEachStep(t *testing.T) {
	ctx := context.Background()
	res, srcs := prepareSource(t)
	opts := Options{Key: "user", Sort: []string{"ts"}, Buckets: 3}
	clean := fileStore(t)
	st, err := PrepareFiles(ctx, res, srcs, clean, opts)
	if err != nil {
		t.Fatal(err)
	}
	if st.Notice != "" || len(st.Files) != 3 {
		t.Fatalf("clean run: notice %q, %d files", st.Notice, len(st.Files))
	}
	m, err := ReadManifest(ctx, clean)
	if err != nil || len(m.Files) != 3 || m.Rows != 3000 || m.Key != "user" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	if k := keys(t, clean); slices.Contains(k, PendingKey) {
		t.Fatalf("pending marker left after a clean run: %v", k)
	}
	want := contents(t, clean)
	writes := 1 + len(st.Files) + 1 // pending marker, files, manifest
	for k := 1; k <= writes; k++ {
		inner := fileStore(t)
		crashing := store.NewFaulty(inner, store.Faults{CrashAfterWrites: k})
		_, err := PrepareFiles(ctx, res, srcs, crashing, opts)
		if !errors.Is(err, store.ErrCrashed) && k < writes {
			t.Fatalf("crash after %d writes: %v", k, err)
		}
		_, rerr := ReadManifest(ctx, inner)
		if k < writes {
			if !errors.Is(rerr, ErrIncomplete) || !strings.Contains(rerr.Error(), PendingKey) {
				t.Fatalf("crash after %d writes: ReadManifest %v, want unfinished", k, rerr)
			}
			st, err := PrepareFiles(ctx, res, srcs, inner, opts)
			if err != nil {
				t.Fatalf("re-run after a crash after %d writes: %v", k, err)
			}
			if !strings.Contains(st.Notice, "unfinished prepare") {
				t.Errorf("re-run after %d writes: notice %q", k, st.Notice)
			}
		} else {
			// Killed after the manifest, before the marker's delete: the
			// output is published; a re-run must be asked to overwrite.
			if rerr != nil {
				t.Fatalf("crash after the manifest: %v", rerr)
			}
			if _, err := PrepareFiles(ctx, res, srcs, inner, opts); !errors.Is(err, store.ErrPrecondition) || !strings.Contains(err.Error(), "--overwrite") {
				t.Fatalf("re-run over a finished output: %v", err)
			}
			o := opts
			o.Overwrite = true
			st, err := PrepareFiles(ctx, res, srcs, inner, o)
			if err != nil || !strings.Contains(st.Notice, "replacing the finished prepare") {
				t.Fatalf("overwrite: %q %v", st.Notice, err)
			}
		}
		if _, err := ReadManifest(ctx, inner); err != nil {
			t.Fatalf("after the re-run (crash at %d): %v", k, err)
		}
		got := contents(t, inner)
		if len(got) != len(want) {
			t.Fatalf("crash at %d then re-run: objects %v, want %v", k, keys(t, inner), keys(t, clean))
		}
		for key, b := range want {
			if got[key] != b {
				t.Errorf("crash at %d then re-run: %s differs from the clean run's", k, key)
			}
		}
	}
}

// TestReadManifestChecksFiles: a manifest whose listed file is missing or
// of another size is not a finished output.
func TestReadManifestChecksFiles(t *testing.T) {
	ctx := context.Background()
	res, srcs := prepareSource(t)
	dst := fileStore(t)
	st, err := PrepareFiles(ctx, res, srcs, dst, Options{Key: "user", Buckets: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.WriteAll(ctx, dst, st.Files[0].Key, []byte("short"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifest(ctx, dst); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("changed file: %v", err)
	}
	if err := dst.Delete(ctx, st.Files[0].Key, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadManifest(ctx, dst); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := ReadManifest(ctx, fileStore(t)); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("empty folder: %v", err)
	}
}
