package interop

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The Spark Ariadne library's jars (the "oracles", one per release) are read
// where they lie, by one convention shared with interop/scripts/sparkenv.py
// (oracles_dir, oracle_jar) and interop/install.sh: the folder
// ARIADNE_ORACLES_DIR, default <repo>/../shared/oracles/ariadne, holds
// <version>/<artifact>-<version>.jar for each release, and jars.json with
// their sha256 (checked by install.sh, so the tests do not re-hash them).

// repoDir is the repository root, found from this source file
// (interop/go/oracles.go), so tests work from any working directory.
func repoDir() string {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		panic("interop: cannot locate the repository from runtime.Caller")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(self), "..", ".."))
}

// OraclesDir returns the folder of the oracle jars: ARIADNE_ORACLES_DIR, or
// <repo>/../shared/oracles/ariadne, as an absolute path (not checked to exist).
func OraclesDir() string {
	if d := os.Getenv("ARIADNE_ORACLES_DIR"); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
		return d
	}
	return filepath.Join(filepath.Dir(repoDir()), "shared", "oracles", "ariadne")
}

// OracleJarPath returns the jar of one release: the single *.jar in
// OraclesDir()/<version>/. It fails when there is none or more than one.
func OracleJarPath(version string) (string, error) {
	m, err := filepath.Glob(filepath.Join(OraclesDir(), version, "*.jar"))
	if err != nil {
		return "", err
	}
	if len(m) != 1 {
		return "", fmt.Errorf("%w: oracle jar of Ariadne %s: want exactly one %s/%s/*.jar, found %d (set ARIADNE_ORACLES_DIR; docs/interop.md \"Oracle jars\")",
			ErrNotInstalled, version, OraclesDir(), version, len(m))
	}
	return m[0], nil
}

// OracleJar is OracleJarPath for a test: the jar of release version, or
// t.Fatal (the harness never skips).
func OracleJar(t testing.TB, version string) string {
	t.Helper()
	p, err := OracleJarPath(version)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Releases returns the releases listed in interop/releases.txt, in file
// order (oldest first).
func Releases() ([]string, error) {
	f, err := os.Open(filepath.Join(repoDir(), "interop", "releases.txt"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out, sc.Err()
}
