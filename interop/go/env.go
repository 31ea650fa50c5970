package interop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// ErrNotInstalled is matched (errors.Is) by the error of LoadEnv when the
// harness's cache lacks the virtual environment or a JAR: run interop/install.sh.
var ErrNotInstalled = errors.New("interop: harness not installed (run interop/install.sh)")

// Env is an installed interop harness: the cache that interop/install.sh
// filled and the repository's interop/scripts folder. It is immutable and
// safe for concurrent use.
type Env struct {
	// Cache is the cache folder (ARIADNE_INTEROP_CACHE, default
	// ~/.cache/ariadne-interop).
	Cache string
	// Python is the virtual environment's interpreter.
	Python string
	// Scripts is the absolute path of interop/scripts.
	Scripts string
	// SparkHome is the installed pyspark package folder (it holds bin/ and
	// jars/ of the Spark distribution).
	SparkHome string
}

// requiredJARs are the file names (prefixes before the version) that
// interop/jars.txt makes install.sh put in the cache.
var requiredJARs = []string{"delta-spark_2.12-", "delta-storage-", "spark-connect_2.12-"}

// LoadEnv locates the installed harness. The cache folder is
// ARIADNE_INTEROP_CACHE or ~/.cache/ariadne-interop; the scripts folder is
// found relative to this source file (interop/go/../scripts). It fails with
// an error matching ErrNotInstalled when the venv, pyspark or a required JAR
// is missing.
func LoadEnv() (*Env, error) {
	cache := os.Getenv("ARIADNE_INTEROP_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("interop: no cache folder: %w", err)
		}
		cache = filepath.Join(home, ".cache", "ariadne-interop")
	}
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return nil, errors.New("interop: cannot locate interop/scripts")
	}
	e := &Env{
		Cache:   cache,
		Python:  filepath.Join(cache, "venv", "bin", "python"),
		Scripts: filepath.Join(filepath.Dir(self), "..", "scripts"),
	}
	if _, err := os.Stat(e.Python); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotInstalled, err)
	}
	sp, err := filepath.Glob(filepath.Join(cache, "venv", "lib", "python3*", "site-packages", "pyspark", "bin", "spark-submit"))
	if err != nil || len(sp) == 0 {
		return nil, fmt.Errorf("%w: pyspark's spark-submit not in %s/venv", ErrNotInstalled, cache)
	}
	e.SparkHome = filepath.Dir(filepath.Dir(sp[0]))
	for _, j := range requiredJARs {
		if _, err := e.JAR(j); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// JAR returns the path of the cached JAR whose file name starts with prefix
// (e.g. "delta-spark_2.12-"); the newest by name when several match.
func (e *Env) JAR(prefix string) (string, error) {
	m, err := filepath.Glob(filepath.Join(e.Cache, "jars", prefix+"*.jar"))
	if err != nil || len(m) == 0 {
		return "", fmt.Errorf("%w: JAR %s* not in %s/jars", ErrNotInstalled, prefix, e.Cache)
	}
	return m[len(m)-1], nil
}

// ScriptError is the failure of a Python script: its exit status and the
// tail of its standard error (Spark logs are long; the tail names the
// exception).
type ScriptError struct {
	Script string
	Err    error  // from exec: *exec.ExitError, context.DeadlineExceeded, ...
	Stderr string // last lines of standard error
}

func (e *ScriptError) Error() string {
	return fmt.Sprintf("interop: %s: %v\n--- stderr (tail) ---\n%s", e.Script, e.Err, e.Stderr)
}

func (e *ScriptError) Unwrap() error { return e.Err }

// stderrTailLines bounds what a ScriptError keeps of standard error: enough
// for a Python traceback plus the JVM exception that caused it.
const stderrTailLines = 60

// RunScript runs interop/scripts/<script> with the venv's Python and returns
// its standard output. The child gets the environment of this process plus
// PYSPARK_PYTHON (so Spark's Python workers use the venv) and
// ARIADNE_INTEROP_CACHE; it is killed when ctx ends (and its pipes abandoned
// 10 s after), so a hung JVM cannot hang the test.
func (e *Env) RunScript(ctx context.Context, script string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, e.Python, append([]string{filepath.Join(e.Scripts, script)}, args...)...)
	cmd.Env = append(os.Environ(),
		"PYSPARK_PYTHON="+e.Python,
		"ARIADNE_INTEROP_CACHE="+e.Cache,
		"PYTHONDONTWRITEBYTECODE=1",
	)
	cmd.WaitDelay = 10 * time.Second
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return nil, &ScriptError{Script: script, Err: err, Stderr: tail(stderr.String(), stderrTailLines)}
	}
	return out.Bytes(), nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
