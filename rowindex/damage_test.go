package rowindex

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/store"
)

// TestDamagedFragment: a fragment the manifest lists but that is missing,
// truncated or overwritten is reported as a damaged row index
// (*FragmentError, ErrCorrupt) naming the fragment and the rebuild, never
// as a changed data file; dropping and re-adding the row index fixes it.
// With its footer intact and its groups' pages overwritten, Warm still
// succeeds (it reads the groups; none becomes resident) and the lookups
// report the damage.
func TestDamagedFragment(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, uris, _ := testLake(t, dir, false)
	def := Definition{Name: "by_user", Key: "user_id", Kind: KindHash}
	key := lakegen.UserID(0)
	for _, damage := range []string{"missing", "truncated", "cut to 10 bytes", "overwritten", "groups overwritten"} {
		t.Run(damage, func(t *testing.T) {
			idx, err := store.Open(ctx, "file://"+filepath.Join(dir, "indexes", strings.ReplaceAll(damage, " ", "_")))
			if err != nil {
				t.Fatal(err)
			}
			man, _, err := Create(ctx, idx, def, StoreResolver{data}, uris)
			if err != nil {
				t.Fatal(err)
			}
			fr := man.Fragments[0]
			fk := folderOf(def.Name) + fr.Path
			b, err := store.ReadAll(ctx, idx, fk)
			if err != nil {
				t.Fatal(err)
			}
			switch damage {
			case "missing":
				err = idx.Delete(ctx, fk, nil)
			case "truncated":
				err = store.WriteAll(ctx, idx, fk, b[:len(b)/2], nil)
			case "cut to 10 bytes":
				err = store.WriteAll(ctx, idx, fk, b[:10], nil)
			case "overwritten":
				junk := make([]byte, len(b))
				for i := range junk {
					junk[i] = byte(i * 31)
				}
				err = store.WriteAll(ctx, idx, fk, junk, nil)
			case "groups overwritten":
				// 256 bytes in the middle of each group: page data, not
				// the footer.
				for _, g := range fr.Groups {
					mid := g.Offset + g.Length/2 - 128
					for i := range int64(256) {
						b[mid+i] ^= byte(0x5a + i)
					}
				}
				err = store.WriteAll(ctx, idx, fk, b, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			ri, err := Open(ctx, idx, def.Name, Options{Resolver: StoreResolver{data}})
			if err != nil {
				t.Fatal(err)
			}
			for _, op := range []string{"lookup", "warm"} {
				if op == "lookup" {
					_, err = ri.Lookup(ctx, Query{Key: key})
				} else {
					_, err = ri.Warm(ctx)
					if damage == "groups overwritten" {
						if err != nil {
							t.Fatalf("warm: %v, want the groups read and left out of the resident ones", err)
						}
						if used, n := ri.resident.stats(); n != 0 {
							t.Fatalf("%d damaged groups resident (%d bytes)", n, used)
						}
						if _, err = ri.Lookup(ctx, Query{Key: key}); err == nil {
							t.Fatal("lookup after warm: no error")
						}
					}
				}
				var fe *FragmentError
				if !errors.As(err, &fe) || !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrDataFileChanged) || errors.Is(err, store.ErrNotExist) {
					t.Fatalf("%s: error %v, want a *FragmentError", op, err)
				}
				for _, want := range []string{fr.Path, "damaged", "drop-row-index INDEX by_user", "add-row-index INDEX --key user_id --name by_user"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: error %q does not say %q", op, err, want)
					}
				}
			}
			// The fix the message gives.
			if err := Drop(ctx, idx, def.Name); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Create(ctx, idx, def, StoreResolver{data}, uris); err != nil {
				t.Fatal(err)
			}
			ri, err = Open(ctx, idx, def.Name, Options{Resolver: StoreResolver{data}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := ri.Lookup(ctx, Query{Key: key})
			if err != nil || len(res.Rows) == 0 {
				t.Fatalf("after the rebuild: %d rows, %v", len(res.Rows), err)
			}
		})
	}
}
