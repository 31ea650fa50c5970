// Package testfixture lays out the shared test fixtures for tests of several
// packages. It is imported by tests only.
package testfixture

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Alpha37Name is the index name of the alpha-37 fixture.
const Alpha37Name = "alpha37_fixture"

// Alpha37Source is the data file URI the alpha-37 fixture's rows record.
const Alpha37Source = "file:///tmp/ariadne-alpha37-source.json"

// Testdata is the absolute path of the repository's testdata folder (copied
// from the project's shared test data; see testdata/README.md).
func Testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

// InstallAlpha37 lays the real index written by release 0.0.1-alpha-37 out
// under the store root folder rootDir (its index folder and its FileList,
// as the Spark library's StorageMigrationTests do) and places its source
// file at the URI its rows record.
func InstallAlpha37(t testing.TB, rootDir string) {
	t.Helper()
	fixture := filepath.Join(Testdata(), "ariadne", "fixtures", "alpha37")
	if _, err := os.Stat(fixture); err != nil {
		t.Fatalf("fixture missing: %v", err)
	}
	CopyDir(t, filepath.Join(fixture, "index-root"), filepath.Join(rootDir, "indexes", Alpha37Name))
	CopyDir(t, filepath.Join(fixture, "filelist"), filepath.Join(rootDir, "filelists", "[ariadne_index] "+Alpha37Name))
	data, err := os.ReadFile(filepath.Join(fixture, "source.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Write-then-rename, so concurrent test processes never see a partial file.
	src := strings.TrimPrefix(Alpha37Source, "file://")
	tmp := src + ".tmp-" + filepath.Base(rootDir)
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, src); err != nil {
		t.Fatal(err)
	}
}

// CopyDir copies the tree at from to to.
func CopyDir(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
