package delta

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// FuzzReadCheckpoint: a Parquet checkpoint (or sidecar) of any content
// never panics in decoding and replaying its actions; a damaged one is an
// error. Seeds: the small checkpoints of the delta-rs test tables (classic,
// v2 sidecars, partitioned, with stats) and testdata/fuzz/FuzzReadCheckpoint.
func FuzzReadCheckpoint(f *testing.F) {
	var paths []string
	for _, g := range []string{"../testdata/delta-rs/*/_delta_log/*.checkpoint*.parquet", "../testdata/delta-rs/*/_delta_log/_sidecars/*.parquet"} {
		m, _ := filepath.Glob(g)
		paths = append(paths, m...)
	}
	n := 0
	for _, p := range paths {
		if fi, err := os.Stat(p); err != nil || fi.Size() > 32<<10 || n >= 8 {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
			n++
		}
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := store.Open(ctx, "mem://")
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := store.WriteAll(ctx, st, "c.checkpoint.parquet", data, nil); err != nil {
			t.Fatal(err)
		}
		acts, err := readParquetActions(ctx, st, "c.checkpoint.parquet")
		if err != nil {
			return
		}
		r := newReplayState()
		for i := range acts {
			_ = r.apply(&acts[i])
		}
	})
}
