package rowindex

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

type benchFx struct {
	ri *RowIndex
	sr *standardReader
}

// benchFixture opens the row index and standard reader over a Bench dir.
func benchFixture(tb testing.TB, dir string) benchFx {
	ctx := context.Background()
	local, _ := store.Open(ctx, "file://"+filepath.Join(dir, "lake"))
	idx, _ := store.Open(ctx, "file://"+filepath.Join(dir, "index"))
	var gap int64
	if g := os.Getenv("ARIADNE_BENCH_GAP"); g != "" {
		gap, _ = strconv.ParseInt(g, 10, 64)
	}
	ri, err := Open(ctx, idx, "by_user", Options{Resolver: StoreResolver{local}, CoalesceGap: gap})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := ri.Warm(ctx); err != nil {
		tb.Fatal(err)
	}
	sr := &standardReader{st: local, keyCol: "user_id"}
	for _, f := range ri.Manifest().Files {
		sr.files = append(sr.files, object{st: local, key: f.URI, uri: f.URI})
		sr.sizes = append(sr.sizes, f.Size)
	}
	return benchFx{ri: ri, sr: sr}
}
