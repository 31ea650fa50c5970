package fileindexbench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/index"
	"github.com/ariadne-go/ariadne/store"
)

// BenchmarkJoinDir repeats the bench's joins (same keys, drawn as `ariadne
// bench fileindex` draws them) on the index and row index a former run
// left in ARIADNE_BENCH_DIR (read only), to profile one key count's join
// with the usual Go tools; DuckDB's join is not run. ARIADNE_BENCH_KEYS
// lists the key counts (default 1); ARIADNE_BENCH_ROWINDEX=0 joins without
// the row index, =force through it whatever the share of matching rows.
//
//	ARIADNE_BENCH_DIR=/tmp/fispeed/bench go test ./bench/fileindexbench -run '^$' -bench '^BenchmarkJoinDir$' -benchtime 20x -cpuprofile join.pprof
func BenchmarkJoinDir(b *testing.B) {
	dir := os.Getenv("ARIADNE_BENCH_DIR")
	if dir == "" {
		b.Skip("set ARIADNE_BENCH_DIR to a bench folder with an index (ariadne bench fileindex --row-index)")
	}
	ctx := context.Background()
	counts := []int{1}
	if s := os.Getenv("ARIADNE_BENCH_KEYS"); s != "" {
		counts = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			counts = append(counts, n)
		}
	}
	idxDir := filepath.Join(dir, "fileindex")
	base, err := store.Open(ctx, "file://"+idxDir)
	if err != nil {
		b.Fatal(err)
	}
	defer base.Close()
	res := store.NewResolver(store.ResolverOptions{})
	defer res.Close()
	cat := index.NewCatalog(base, index.Options{Config: config.Defaults(), Resolver: res})
	ix, err := cat.Get(ctx, "listens")
	if err != nil {
		b.Fatal(err)
	}
	var loc fileindex.RowLocator
	if mode := os.Getenv("ARIADNE_BENCH_ROWINDEX"); mode != "0" {
		cfg := Config{Dir: dir}
		cfg.defaults()
		if mode == "" {
			mode = ariadne.JoinRowIndexAuto
		}
		if loc, err = rowIndexLocator(ctx, cfg, &Report{}, ix, nil, idxDir, mode); err != nil {
			b.Fatal(err)
		}
	}
	fi := fileindex.New(ix, fileindex.Options{})
	keyGen := newKeyGen(DefaultLake())
	for _, k := range counts {
		users := keyGen.present(k)
		rows := make([][]any, len(users))
		for i, u := range users {
			rows[i] = []any{u}
		}
		b.Run(fmt.Sprintf("keys=%d", k), func(b *testing.B) {
			var n int64
			var st fileindex.JoinStats
			for b.Loop() {
				r, err := fi.Join(ctx, fileindex.RowsSource(keySchema, rows), []string{"user_id"}, fileindex.Inner, fileindex.JoinOptions{Rows: loc})
				if err != nil {
					b.Fatal(err)
				}
				if n, _, err = drainHash(ctx, r.Next); err != nil {
					b.Fatal(err)
				}
				st = r.Stats()
				r.Close()
			}
			b.ReportMetric(float64(n), "rows")
			b.Logf("path %s direct %v: %s", st.Path, st.Direct, st.Plan)
		})
	}
}
