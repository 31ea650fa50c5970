package metadata

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/store"
)

// backends opens each store the package must work on.
func backends(t *testing.T) map[string]store.Store {
	t.Helper()
	ctx := context.Background()
	out := map[string]store.Store{}
	for name, url := range map[string]string{"mem": "mem://", "file": "file://" + t.TempDir()} {
		s, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[name] = s
	}
	return out
}

const key = "indexes/i/metadata.json"

func TestLoadMissingOrCorrupt(t *testing.T) {
	ctx := context.Background()
	for name, s := range backends(t) {
		t.Run(name, func(t *testing.T) {
			_, _, err := Load(ctx, s, key)
			if !errors.Is(err, aerr.ErrMetadataMissingOrCorrupt) || !errors.Is(err, store.ErrNotExist) {
				t.Errorf("missing: err = %v", err)
			}
			for _, content := range []string{"", "  ", "{", "null", `{"format":"csv"}`} {
				if err := store.WriteAll(ctx, s, key, []byte(content), nil); err != nil {
					t.Fatal(err)
				}
				if _, _, err := Load(ctx, s, key); !errors.Is(err, aerr.ErrMetadataMissingOrCorrupt) {
					t.Errorf("content %q: err = %v", content, err)
				}
			}
		})
	}
}

// TestLoadLeavesBytesUnchanged: a bare load (the registry's reconnect) only
// reads, so an unversioned alpha37 record stays byte-identical on disk.
func TestLoadLeavesBytesUnchanged(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, err := store.Open(ctx, "file://"+root)
	if err != nil {
		t.Fatal(err)
	}
	orig := mustRead(t, alpha37)
	if err := store.WriteAll(ctx, s, key, orig, nil); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(filepath.Join(root, filepath.FromSlash(key)))
	if err != nil {
		t.Fatal(err)
	}
	m, v, err := Load(ctx, s, key)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Exists() || m.MetadataVersion != nil || m.StorageFormatVersion != nil {
		t.Fatalf("version %v, markers %v %v", v, m.MetadataVersion, m.StorageFormatVersion)
	}
	after, err := os.Stat(filepath.Join(root, filepath.FromSlash(key)))
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, filepath.Join(root, filepath.FromSlash(key))); string(got) != string(orig) {
		t.Error("Load changed the bytes")
	}
	if !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
		t.Error("Load rewrote the file")
	}
	if info, err := s.Stat(ctx, key); err != nil || info.ETag != v.etag {
		t.Errorf("ETag %q after load, version %v (%v)", info.ETag, v, err)
	}
}

func TestStoreCompareAndSwap(t *testing.T) {
	ctx := context.Background()
	for name, s := range backends(t) {
		t.Run(name, func(t *testing.T) {
			m := NewMetadata("csv", "s")
			v1, err := Store(ctx, s, key, m, Version{})
			if err != nil {
				t.Fatal(err)
			}
			// Creating again (zero prev) conflicts: another creator won.
			if _, err := Store(ctx, s, key, m, Version{}); !errors.Is(err, ErrConcurrentUpdate) || !errors.Is(err, store.ErrPrecondition) {
				t.Fatalf("second create: err = %v", err)
			}
			got, v, err := Load(ctx, s, key)
			if err != nil || v != v1 || !Equal(got, m) {
				t.Fatalf("Load = %+v, %v, %v; want version %v", got, v, err, v1)
			}
			got.Indexes = append(got.Indexes, "a")
			v2, err := Store(ctx, s, key, got, v1)
			if err != nil {
				t.Fatal(err)
			}
			if v2 == v1 {
				t.Fatal("version did not change")
			}
			// A writer still holding v1 loses and does not overwrite.
			stale := m.Clone()
			stale.Indexes = []string{"b"}
			var cu *ConcurrentUpdateError
			if _, err := Store(ctx, s, key, stale, v1); !errors.As(err, &cu) || cu.Prev != v1 || cu.Key != key {
				t.Fatalf("stale write: err = %v", err)
			}
			got, v, err = Load(ctx, s, key)
			if err != nil || v != v2 || len(got.Indexes) != 1 || got.Indexes[0] != "a" {
				t.Fatalf("after stale write: %+v, %v, %v", got, v, err)
			}
			want, _ := Marshal(got)
			if data, _ := store.ReadAll(ctx, s, key); string(data) != string(want) {
				t.Errorf("stored bytes %s, want %s", data, want)
			}
		})
	}
}

// TestStoreValidatesBeforeWriting: content that does not re-parse is never
// written.
func TestStoreValidatesBeforeWriting(t *testing.T) {
	ctx := context.Background()
	for name, s := range backends(t) {
		t.Run(name, func(t *testing.T) {
			m := NewMetadata("csv", "s")
			v, err := Store(ctx, s, key, m, Version{})
			if err != nil {
				t.Fatal(err)
			}
			before, _ := store.ReadAll(ctx, s, key)
			bad := m.Clone()
			bad.BloomIndexes = []BloomIndex{{"b", math.NaN()}}
			if _, err := Store(ctx, s, key, bad, v); !errors.Is(err, aerr.ErrMetadataMissingOrCorrupt) {
				t.Fatalf("err = %v", err)
			}
			if after, _ := store.ReadAll(ctx, s, key); string(after) != string(before) {
				t.Error("invalid metadata was written")
			}
		})
	}
}

// TestConcurrentStore: of several writers with the same prev version,
// exactly one succeeds and its content is what remains.
func TestConcurrentStore(t *testing.T) {
	ctx := context.Background()
	const writers = 8
	for name, s := range backends(t) {
		t.Run(name, func(t *testing.T) {
			for _, create := range []bool{true, false} {
				k := key
				prev := Version{}
				if !create {
					k = "other/metadata.json"
					var err error
					if prev, err = Store(ctx, s, k, NewMetadata("csv", "s"), Version{}); err != nil {
						t.Fatal(err)
					}
				}
				var wg sync.WaitGroup
				errs := make([]error, writers)
				for i := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						m := NewMetadata("csv", "s")
						m.BatchesSinceCompact = i
						_, errs[i] = Store(ctx, s, k, m, prev)
					}()
				}
				wg.Wait()
				winner := -1
				for i, err := range errs {
					switch {
					case err == nil && winner >= 0:
						t.Fatalf("create=%v: writers %d and %d both succeeded", create, winner, i)
					case err == nil:
						winner = i
					case !errors.Is(err, ErrConcurrentUpdate):
						t.Fatalf("create=%v: writer %d: %v", create, i, err)
					}
				}
				if winner < 0 {
					t.Fatalf("create=%v: no writer succeeded", create)
				}
				got, _, err := Load(ctx, s, k)
				if err != nil || got.BatchesSinceCompact != winner {
					t.Errorf("create=%v: stored %+v, %v; want the winner %d", create, got, err, winner)
				}
			}
		})
	}
}

// TestRequestCounts pins the store requests of Load and Store.
func TestRequestCounts(t *testing.T) {
	ctx := context.Background()
	mem, _ := store.Open(ctx, "mem://")
	s := store.NewCounting(mem)
	v, err := Store(ctx, s, key, NewMetadata("csv", "s"), Version{})
	if err != nil {
		t.Fatal(err)
	}
	st := s.Snapshot()
	if st.Write.Requests != 1 || st.Stat.Requests != 2 || st.Read.Requests != 1 || st.Total.Requests != 4 {
		t.Errorf("Store: %+v, want 1 write + read-back (2 stats, 1 read)", st)
	}
	s.Reset()
	if _, got, err := Load(ctx, s, key); err != nil || got != v {
		t.Fatalf("Load: %v, %v", got, err)
	}
	if st := s.Snapshot(); st.Stat.Requests != 2 || st.Read.Requests != 1 || st.Total.Requests != 3 {
		t.Errorf("Load: %+v, want 2 stats and 1 read", st)
	}
}
