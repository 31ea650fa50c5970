package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/store"
)

// run executes the command line with a store in dir and returns exit code,
// stdout and stderr.
func run(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"ARIADNE_STORE": "file://" + dir}
	code := Main(context.Background(), args, Env{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	return code, out.String(), errb.String()
}

// runOK runs the command line like run, fails the test on a non-zero exit
// and returns stdout.
func runOK(t *testing.T, dir string, args ...string) string {
	t.Helper()
	code, out, errs := run(t, dir, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errs)
	}
	return out
}

// genLake generates the lake cfg describes into a new temporary folder and
// returns the folder and the files, in key order.
func genLake(t *testing.T, cfg lakegen.Config) (string, []lakegen.File) {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := lakegen.Generate(context.Background(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dir, files
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return m
}

const testdata = "../../testdata/ariadne/data"

func TestRegistryCommands(t *testing.T) {
	dir := t.TempDir()
	data, _ := filepath.Abs(testdata)
	p0 := filepath.Join(data, "table1_part0.csv")

	code, out, errs := run(t, dir, "--json", "create", "t1", "--format", "csv", "--read-option", "header=true", "--infer-from", p0)
	if code != 0 {
		t.Fatalf("create: %d %s", code, errs)
	}
	m := decode(t, out)
	if m["schema"] != `{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},{"name":"Version","type":"integer","nullable":true,"metadata":{}},{"name":"Value","type":"double","nullable":true,"metadata":{}}]}` {
		t.Fatalf("inferred schema: %v", m["schema"])
	}
	// A schema file works too, and reconnecting with another format fails
	// with a typed, machine-readable error.
	schemaFile := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(schemaFile, []byte(m["schema"].(string)), 0o644)
	if code, _, errs := run(t, dir, "create", "t1", "--format", "csv", "--schema", schemaFile); code != 0 {
		t.Fatalf("reconnect: %s", errs)
	}
	code, out, _ = run(t, dir, "--json", "create", "t1", "--format", "json", "--schema", schemaFile)
	if code != 1 || decode(t, out)["kind"] != "format mismatch" {
		t.Fatalf("format mismatch: %d %s", code, out)
	}

	code, out, errs = run(t, dir, "--json", "add-files", "t1", filepath.Join(data, "table1_part*.csv"))
	if code != 0 {
		t.Fatalf("add-files: %s", errs)
	}
	if m := decode(t, out); m["added"] != 2.0 {
		t.Fatalf("add-files: %v", m)
	}
	code, out, _ = run(t, dir, "--json", "files", "t1")
	files := decode(t, out)["files"].([]any)
	if code != 0 || len(files) != 2 || files[0].(map[string]any)["filename"] != "file://"+filepath.ToSlash(p0) {
		t.Fatalf("files: %s", out)
	}
	code, out, _ = run(t, dir, "--json", "find-indexes", p0)
	if code != 0 || !slices.Equal(toStrings(decode(t, out)["indexes"]), []string{"t1"}) {
		t.Fatalf("find-indexes: %s", out)
	}
	code, out, _ = run(t, dir, "--json", "describe", "t1")
	if d := decode(t, out); code != 0 || d["file_count"] != 2.0 || d["format"] != "csv" {
		t.Fatalf("describe: %s", out)
	}
	code, out, _ = run(t, dir, "list")
	if code != 0 || out != "t1\n" {
		t.Fatalf("list: %q", out)
	}
	code, _, _ = run(t, dir, "remove", "t1")
	if code != 0 {
		t.Fatal("remove")
	}
	code, out, _ = run(t, dir, "--json", "describe", "t1")
	if code != 1 || decode(t, out)["kind"] != "index not found" {
		t.Fatalf("describe after remove: %d %s", code, out)
	}
	if _, err := os.Stat(p0); err != nil {
		t.Fatal("remove touched a data file")
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"bogus"},
		{"create", "x", "--format", "csv"},
		{"create", "x", "--format", "xml", "--schema", "f"},
		{"add-files", "x"},
		{"--set", "noSuchKey=1", "list"},
	} {
		code, _, errs := run(t, dir, args...)
		if code == 0 || errs == "" {
			t.Errorf("%v: code %d, stderr %q", args, code, errs)
		}
	}
	if code, _, _ := run(t, dir, "create", "../x", "--format", "csv", "--schema", "f"); code != 1 {
		t.Errorf("hostile name: code %d", code)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("failed commands wrote to the store: %v", entries)
	}
}

func TestDeltaLs(t *testing.T) {
	table, _ := filepath.Abs("../../testdata/delta-rs/table-with-dv-small")
	code, out, errs := run(t, t.TempDir(), "--json", "delta", "ls", table)
	if code != 0 {
		t.Fatal(errs)
	}
	m := decode(t, out)
	if m["version"] != 1.0 || m["num_records"] != 8.0 || m["num_files"] != 1.0 || len(m["protocol"].(map[string]any)["reader_features"].([]any)) == 0 {
		t.Fatalf("delta ls: %s", out)
	}
	code, out, _ = run(t, t.TempDir(), "--json", "delta", "ls", "--version", "0", table)
	if code != 0 || decode(t, out)["num_records"] != 10.0 {
		t.Fatalf("time travel: %s", out)
	}
	code, out, _ = run(t, t.TempDir(), "--json", "delta", "ls", filepath.Join(table, "..", "simple_table_features"))
	if code != 1 || decode(t, out)["kind"] != "unsupported feature" {
		t.Fatalf("refused table: %s", out)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}
