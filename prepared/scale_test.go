package prepared

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// tiedEvents are genEvents with user 0's timestamps cut to the hour, so
// that many rows are equal on every sort column (user, ts) and only the
// stable order of the sort and the merge's run order tell them apart (their
// other columns differ).
func tiedEvents(seed uint64, n int) []event {
	evs := genEvents(seed, n)
	for i := range evs {
		if u := evs[i].User; u != nil && *u == 0 {
			evs[i].TS = evs[i].TS.Truncate(time.Hour)
		}
	}
	return evs
}

// prepareTree writes evs as three source files and prepares them with o
// (Key "user", Sort "ts", 2 KiB pages, 7,000-row row groups added), and
// returns every output file's bytes by name and the runs spilled.
func prepareTree(t *testing.T, evs []event, o Options) (map[string][]byte, int) {
	t.Helper()
	ctx := context.Background()
	src := fileStore(t)
	third := len(evs) / 3
	for i, part := range [][]event{evs[:third], evs[third : 2*third], evs[2*third:]} {
		sw, err := src.NewWriter(ctx, fmt.Sprintf("in/%d.parquet", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := parquet.Write(sw, part); err != nil {
			t.Fatal(err)
		}
		if err := sw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	res := storeResolver{src}
	srcs, err := Sources(ctx, res, []string{"in"})
	if err != nil {
		t.Fatal(err)
	}
	o.Key, o.Sort, o.PageBytes, o.RowGroupRows = "user", []string{"ts"}, 2048, 7000
	o.TempDir = t.TempDir()
	dst := fileStore(t)
	st, err := PrepareFiles(ctx, res, srcs, dst, o)
	if err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(o.TempDir); len(ents) != 0 {
		t.Errorf("runs left behind: %v", ents)
	}
	out := map[string][]byte{}
	var rows int64
	for _, f := range st.Files {
		_, b := openFile(t, dst, f.Key)
		out[f.Key] = b
		rows += f.Rows
	}
	if rows != int64(len(evs)) {
		t.Fatalf("%d rows written of %d", rows, len(evs))
	}
	if !slices.IsSortedFunc(st.Files, func(a, b FileStats) int { return cmpString(a.Key, b.Key) }) {
		t.Errorf("files not in bucket order: %v", st.Files)
	}
	return out, st.Runs
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestExternalParallelSortIsIdentical: PrepareFiles under budgets that
// force many runs, with one worker and with four (buckets and pieces of a
// bucket sorted, spilled and written in parallel), gives the same files
// byte for byte as the in-memory sort, for one bucket (its held rows cut
// into pieces, one run each) and for three; rows tied on (key, ts) keep
// their input order across runs. With runs merged three at a time (in
// several passes before the final merge) the files are the same too.
func TestExternalParallelSortIsIdentical(t *testing.T) {
	evs := tiedEvents(21, 60_000)
	for _, buckets := range []int{1, 3} {
		t.Run(fmt.Sprint(buckets, " buckets"), func(t *testing.T) {
			want, runs := prepareTree(t, evs, Options{Buckets: buckets, Parallelism: 1})
			if runs != 0 {
				t.Fatalf("%d runs under the default budget", runs)
			}
			for _, c := range []struct {
				mem            int64
				workers, fanIn int
			}{{8 << 20, 1, 0}, {8 << 20, 4, 0}, {3 << 20, 4, 0}, {3 << 20, 2, 3}} {
				// fanIn 3: runs merged 3 at a time, in several passes.
				got, runs := prepareTree(t, evs, Options{Buckets: buckets, MemoryBytes: c.mem, Parallelism: c.workers, mergeFanIn: c.fanIn})
				if runs < 4 {
					t.Fatalf("budget %d, %d workers: %d runs, the merge is not exercised", c.mem, c.workers, runs)
				}
				if len(got) != len(want) {
					t.Fatalf("budget %d, %d workers: %d files, want %d", c.mem, c.workers, len(got), len(want))
				}
				for name, b := range want {
					if !bytes.Equal(got[name], b) {
						t.Errorf("budget %d, %d workers, %d runs: %s differs from the in-memory sort's", c.mem, c.workers, runs, name)
					}
				}
			}
		})
	}
}

// TestHugeKeyStreams: a key whose rows alone need more than half the
// budget (user 0: ≈10 % of 200,000 rows, ≈7 MB held) is written with
// packed pages under a 4 MiB budget (2 MiB for rows): the writer streams a
// key's rows page by page instead of holding them (it failed with
// ErrMemoryBudget before). The file is the one the in-memory sort writes,
// and every row is read back in order.
func TestHugeKeyStreams(t *testing.T) {
	ctx := context.Background()
	evs := tiedEvents(22, 200_000)
	write := func(mem int64) []byte {
		st := fileStore(t)
		schema, rows := eventRows(t, evs)
		fs, err := Write(ctx, st, "f.parquet", schema, rows, Options{Key: "user", Sort: []string{"ts"}, PageBytes: 4096,
			MemoryBytes: mem, TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if fs.MaxPagesPerKey < 50 {
			t.Fatalf("the heaviest key spans %d pages: not a huge key", fs.MaxPagesPerKey)
		}
		_, b := openFile(t, st, "f.parquet")
		return b
	}
	small, big := write(4<<20), write(0)
	if !bytes.Equal(small, big) {
		t.Fatal("the file written under a 4 MiB budget differs from the in-memory one")
	}
	got, err := parquet.Read[event](bytes.NewReader(small), int64(len(small)))
	if err != nil {
		t.Fatal(err)
	}
	want := sortedEvents(evs)
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].String() != want[i].String() {
			t.Fatalf("row %d: %v, want %v", i, got[i], want[i])
		}
	}
}
