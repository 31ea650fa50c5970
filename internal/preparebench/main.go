// Command preparebench generates the flat listening-history folder of the
// prepare measurement in docs/prepared.md and runs its DuckDB baseline, so
// that each step runs in its own process under /usr/bin/time -v (time and
// peak RSS):
//
//	preparebench gen DIR SIZE_MB FILES     one partition of FILES unsorted files (lakegen's arrival layout)
//	preparebench duckdb-sort GLOB OUT MEM  COPY (SELECT * FROM read_parquet(GLOB) ORDER BY user_id, ts) TO OUT (FORMAT parquet, COMPRESSION zstd)
//	preparebench profile SRC OUT PROFILE   prepare SRC into OUT (key user_id, sort ts, 1 GiB, the rest chosen) under a CPU profile
//
// It is a benchmark tool, not part of the product.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

func main() {
	if err := run(context.Background(), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "preparebench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 4 && args[0] == "gen" {
		sizeMB, err1 := strconv.Atoi(args[2])
		files, err2 := strconv.Atoi(args[3])
		if err1 != nil || err2 != nil {
			return fmt.Errorf("gen DIR SIZE_MB FILES")
		}
		return gen(ctx, args[1], sizeMB, files)
	}
	if len(args) == 4 && args[0] == "duckdb-sort" {
		return duckSort(ctx, args[1], args[2], args[3])
	}
	if len(args) == 4 && args[0] == "profile" {
		return profile(ctx, args[1], args[2], args[3])
	}
	return fmt.Errorf("usage: preparebench gen DIR SIZE_MB FILES | duckdb-sort GLOB OUT MEMORY_LIMIT | profile SRC OUT PROFILE")
}

// gen writes one day of lakegen's default lake scaled to sizeMB (users and
// tracks scaled alike), in arrival order over files files.
func gen(ctx context.Context, dir string, sizeMB, files int) error {
	c := lakegen.DefaultConfig()
	scale := float64(sizeMB) * (1 << 20) / float64(c.TargetBytes)
	c.TargetBytes = int64(sizeMB) << 20
	c.Users = max(1000, int(float64(c.Users)*scale))
	c.Tracks = max(1000, int(float64(c.Tracks)*scale))
	c.Days, c.FilesPerDay = 1, files
	st, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		return err
	}
	defer st.Close()
	fs, err := lakegen.Generate(ctx, st, c)
	if err != nil {
		return err
	}
	var rows, bytes int64
	for _, f := range fs {
		rows, bytes = rows+f.Rows, bytes+f.Size
	}
	fmt.Printf("%d files, %d rows, %d bytes, %d users, %d tracks\n", len(fs), rows, bytes, c.Users, c.Tracks)
	return nil
}

// duckSort sorts the files with DuckDB into one Parquet file (DuckDB's
// defaults: SNAPPY, its own row groups), under memLimit, spilling to a
// folder next to out.
func duckSort(ctx context.Context, glob, out, memLimit string) error {
	tmp := out + ".tmp"
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	db, err := duck.Open(ctx, duck.Options{MemoryLimit: memLimit, TempDirectory: tmp})
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	q := fmt.Sprintf(`COPY (SELECT * FROM read_parquet(%s) ORDER BY user_id, ts) TO %s (FORMAT parquet, COMPRESSION zstd)`,
		duck.String(glob), duck.String(filepath.Clean(out)))
	if err := db.Exec(ctx, q); err != nil {
		return err
	}
	info, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Printf("duckdb sorted %s into %s: %d bytes in %s\n", glob, out, info.Size(), time.Since(start).Round(time.Millisecond))
	return nil
}

// profile prepares the files under src into the folder out as `ariadne
// prepare SRC --out OUT --key user_id --sort ts --memory 1GiB` does (runs
// in OUT.tmp), writing a CPU profile of it to prof: where prepare's CPU
// goes against DuckDB's sort.
func profile(ctx context.Context, src, out, prof string) error {
	f, err := os.Create(prof)
	if err != nil {
		return err
	}
	defer f.Close()
	res := store.NewResolver(store.ResolverOptions{})
	srcs, err := prepared.Sources(ctx, res, []string{src})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out+".tmp", 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(out + ".tmp")
	dst, err := store.Open(ctx, "file://"+out)
	if err != nil {
		return err
	}
	defer dst.Close()
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	defer pprof.StopCPUProfile()
	start := time.Now()
	st, err := prepared.PrepareFiles(ctx, res, srcs, dst, prepared.Options{Key: "user_id", Sort: []string{"ts"}, MemoryBytes: 1 << 30, TempDir: out + ".tmp", Overwrite: true})
	if err != nil {
		return err
	}
	fmt.Printf("prepared %d rows into %d files, %d bytes, in %s\n", st.Rows, len(st.Files), st.Bytes, time.Since(start).Round(time.Millisecond))
	return nil
}
