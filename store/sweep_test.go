package store

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSweepTemps: abandoned temporary files (as a killed write leaves them),
// and the folders they leave empty,
// older than the cutoff are deleted in the folder and below it; recent
// ones (writes perhaps in flight), objects and other folders are kept;
// Sub stores sweep their own part; other backends do nothing.
func TestSweepTemps(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, k := range []string{"indexes/x/index/part-0.parquet", "indexes/y/metadata.json"} {
		if err := WriteAll(ctx, s, k, []byte("data"), nil); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	temp := func(rel string, mtime time.Time) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	// A killed run's staging/: folders holding only a temporary file.
	if err := os.MkdirAll(filepath.Join(dir, "indexes", "x", "staging", "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	temp("indexes/x/staging/_delta_log/"+tmpPrefix+"d", old)
	temp("indexes/x/"+tmpPrefix+"a", old)
	temp("indexes/x/index/"+tmpPrefix+"b", old)
	temp("indexes/x/index/"+tmpPrefix+"recent", time.Now())
	temp("indexes/y/"+tmpPrefix+"c", old)
	cutoff := time.Now().Add(-24 * time.Hour)

	got, err := SweepTemps(ctx, Sub(s, "indexes"), "x", cutoff)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"x/" + tmpPrefix + "a", "x/index/" + tmpPrefix + "b", "x/staging/", "x/staging/_delta_log/", "x/staging/_delta_log/" + tmpPrefix + "d"}; !slices.Equal(got, want) {
		t.Fatalf("deleted %v, want %v", got, want)
	}
	for rel, want := range map[string]bool{
		"indexes/x/" + tmpPrefix + "a":            false,
		"indexes/x/index/" + tmpPrefix + "b":      false,
		"indexes/x/index/" + tmpPrefix + "recent": true,
		"indexes/y/" + tmpPrefix + "c":            true,
		"indexes/x/index/part-0.parquet":          true,
		"indexes/x/index":                         true,
		"indexes/x/staging":                       false,
	} {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if exists := err == nil; exists != want {
			t.Errorf("%s: exists %v, want %v", rel, exists, want)
		}
	}
	if got, err := SweepTemps(ctx, s, "missing/folder", cutoff); err != nil || len(got) != 0 {
		t.Errorf("missing folder: %v, %v", got, err)
	}
	mem, _ := Open(ctx, "mem://")
	if got, err := SweepTemps(ctx, mem, "", cutoff); err != nil || len(got) != 0 {
		t.Errorf("mem: %v, %v", got, err)
	}
}
