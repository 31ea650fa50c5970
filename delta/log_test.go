package delta

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/store"
)

// copyTable copies a delta-rs table into a temporary folder for damage.
func copyTable(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(deltaRSDir, name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func logFile(dir string, name string) string { return filepath.Join(dir, "_delta_log", name) }

// TestTimeTravel reads versions of tables with several versions and checks
// the number of active files against an independent replay of the JSON
// commits (a few lines of Python: unquote paths, add inserts, remove
// deletes).
func TestTimeTravel(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		table string
		files map[int64]int // version → number of active files
	}{
		{"simple_table", map[int64]int{0: 6, 1: 22, 2: 6, 3: 6, 4: 5}},
		{"simple_table_with_checkpoint", map[int64]int{0: 1, 5: 6, 9: 10, 10: 11}},
		{"checkpoints", map[int64]int{0: 0, 1: 1, 11: 11, 12: 12}},
	} {
		t.Run(tc.table, func(t *testing.T) {
			tbl := openDir(t, filepath.Join(deltaRSDir, tc.table))
			for v, n := range tc.files {
				s, err := tbl.SnapshotAt(ctx, v)
				if err != nil {
					t.Fatalf("SnapshotAt(%d): %v", v, err)
				}
				if s.Version() != v || len(s.Files()) != n {
					t.Errorf("SnapshotAt(%d): version %d, %d files, want %d", v, s.Version(), len(s.Files()), n)
				}
			}
			latest, err := tbl.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tbl.SnapshotAt(ctx, latest.Version()+1); !errors.Is(err, ErrVersionNotFound) {
				t.Errorf("SnapshotAt(latest+1): %v, want ErrVersionNotFound", err)
			}
			if _, err := tbl.SnapshotAt(ctx, -1); !errors.Is(err, ErrVersionNotFound) {
				t.Errorf("SnapshotAt(-1): %v, want ErrVersionNotFound", err)
			}
		})
	}
}

// TestVacuumedHistory: commits before the oldest checkpoint were deleted, so
// older versions are gone but later ones replay from the checkpoint.
func TestVacuumedHistory(t *testing.T) {
	ctx := context.Background()
	tbl := openDir(t, filepath.Join(deltaRSDir, "checkpoints_vacuumed"))
	entries, _ := os.ReadDir(filepath.Join(deltaRSDir, "checkpoints_vacuumed", "_delta_log"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if _, err := tbl.SnapshotAt(ctx, 2); !errors.Is(err, ErrVersionNotFound) {
		t.Errorf("SnapshotAt(2) in %v: %v, want ErrVersionNotFound", names, err)
	}
	for _, v := range []int64{5, 7, 12} {
		if _, err := tbl.SnapshotAt(ctx, v); err != nil {
			t.Errorf("SnapshotAt(%d): %v", v, err)
		}
	}
}

// TestCorruptLogs damages copies of real tables.
func TestCorruptLogs(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, table string
		damage      func(t *testing.T, dir string)
		is          error
		key         string // substring of CorruptLogError.Key
		line        int
	}{
		{"non-JSON line", "simple_table", func(t *testing.T, dir string) {
			f, _ := os.OpenFile(logFile(dir, "00000000000000000002.json"), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("{not json\n")
			f.Close()
		}, ErrCorruptLog, "00000000000000000002.json", -1},
		{"gap in versions", "simple_table", func(t *testing.T, dir string) {
			os.Remove(logFile(dir, "00000000000000000002.json"))
		}, ErrCorruptLog, "00000000000000000002.json", 0},
		{"truncated checkpoint", "simple_table_with_checkpoint", func(t *testing.T, dir string) {
			p := logFile(dir, "00000000000000000010.checkpoint.parquet")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, ErrCorruptLog, "00000000000000000010.checkpoint.parquet", 0},
		{"garbage checkpoint", "simple_table_with_checkpoint", func(t *testing.T, dir string) {
			p := logFile(dir, "00000000000000000010.checkpoint.parquet")
			b, _ := os.ReadFile(p)
			for i := 4; i < len(b)-8; i += 7 {
				b[i] ^= 0x5a
			}
			os.WriteFile(p, b, 0o644)
		}, ErrCorruptLog, "00000000000000000010.checkpoint.parquet", 0},
		{"missing checkpoint part, no history", "simple_table_with_checkpoint", func(t *testing.T, dir string) {
			// Turn the checkpoint into part 1 of 2 and drop the early commits.
			os.Rename(logFile(dir, "00000000000000000010.checkpoint.parquet"), logFile(dir, "00000000000000000010.checkpoint.0000000001.0000000002.parquet"))
			os.Remove(logFile(dir, "00000000000000000000.json"))
		}, ErrCorruptLog, "00000000000000000010.checkpoint.0000000002.0000000002.parquet", 0},
		{"no log", "simple_table", func(t *testing.T, dir string) {
			os.RemoveAll(filepath.Join(dir, "_delta_log"))
		}, ErrNotATable, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyTable(t, tc.table)
			tc.damage(t, dir)
			abs, _ := filepath.Abs(dir)
			st, err := store.Open(ctx, "file://"+abs)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			tbl, err := Open(ctx, st)
			if err == nil {
				_, err = tbl.Snapshot(ctx)
			}
			if !errors.Is(err, tc.is) {
				t.Fatalf("got %v, want %v", err, tc.is)
			}
			if tc.key == "" {
				return
			}
			var ce *CorruptLogError
			if !errors.As(err, &ce) || !strings.Contains(ce.Key, tc.key) {
				t.Fatalf("got %v, want a CorruptLogError for %s", err, tc.key)
			}
			if tc.line < 0 && ce.Line == 0 || tc.line >= 0 && ce.Line != tc.line {
				t.Errorf("line %d (want %d; -1: any)", ce.Line, tc.line)
			}
		})
	}
}

// TestMissingPartFallsBack: an incomplete newer checkpoint is skipped when
// the full commit history is there.
func TestMissingPartFallsBack(t *testing.T) {
	ctx := context.Background()
	dir := copyTable(t, "simple_table_with_checkpoint")
	os.Rename(logFile(dir, "00000000000000000010.checkpoint.parquet"), logFile(dir, "00000000000000000010.checkpoint.0000000001.0000000002.parquet"))
	s, err := openDir(t, dir).Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.Version() != 10 || len(s.Files()) != 11 || s.cpVersion != -1 {
		t.Fatalf("version %d, %d files, checkpoint %d", s.Version(), len(s.Files()), s.cpVersion)
	}
}

// TestSnapshotRequests: one List plus one read per needed log object, and
// none at all for an unchanged table's cached snapshot beyond the List.
func TestSnapshotRequests(t *testing.T) {
	ctx := context.Background()
	abs, _ := filepath.Abs(filepath.Join(deltaRSDir, "simple_table_with_checkpoint"))
	fs, err := store.Open(ctx, "file://"+abs)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	cs := store.NewCounting(fs)
	tbl, err := Open(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	before := cs.Snapshot()
	s, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := cs.Snapshot().Sub(before)
	// Checkpoint 10 is the newest object: one List, one read.
	if d.List.Requests != 1 || d.Read.Requests != 1 || d.Total.Requests != 2 {
		t.Fatalf("latest snapshot: %+v", d)
	}
	before = cs.Snapshot()
	s2, err := tbl.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := cs.Snapshot().Sub(before); d.Total.Requests != 1 || s2 != s {
		t.Fatalf("cached snapshot: %+v, same=%v", d, s2 == s)
	}
	before = cs.Snapshot()
	if _, err := tbl.SnapshotAt(ctx, 9); err != nil {
		t.Fatal(err)
	}
	// No checkpoint at or below 9: commits 0..9 are read.
	if d := cs.Snapshot().Sub(before); d.List.Requests != 1 || d.Read.Requests != 10 {
		t.Fatalf("version 9: %+v", d)
	}
}

func TestCommitInfo(t *testing.T) {
	ctx := context.Background()
	s, err := openDir(t, filepath.Join(deltaRSDir, "simple_table")).Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ci, err := s.CommitInfo(ctx, 0)
	if err != nil || ci["operation"] == nil {
		t.Fatalf("CommitInfo(0) = %v, %v", ci, err)
	}
	if _, err := s.CommitInfo(ctx, 99); !errors.Is(err, ErrVersionNotFound) {
		t.Fatalf("CommitInfo(99): %v", err)
	}
}
