package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestExactValues: --value passes one value exactly as typed: a comma is
// not a list separator for locate, ".." is not a range for lookup.
func TestExactValues(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{"comma.csv": "Id,Name\n1,\"a,b\"\n", "a.csv": "Id,Name\n2,a\n", "b.csv": "Id,Name\n3,b\n"} {
		os.WriteFile(filepath.Join(data, name), []byte(body), 0o644)
	}
	schema := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(schema, []byte(`{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}},{"name":"Name","type":"string","nullable":true,"metadata":{}}]}`), 0o644)
	runOK(t, dir, "create", "c", "--format", "csv", "--schema", schema, "--read-option", "header=true")
	runOK(t, dir, "add-index", "c", "--regular", "Name")
	runOK(t, dir, "add-files", "c", data)
	runOK(t, dir, "update", "c")
	files := func(out string) []string { return toStrings(decode(t, out)["files"]) }
	split := files(runOK(t, dir, "--json", "locate", "c", "--key", "Name=a,b"))
	if len(split) != 2 || !strings.HasSuffix(split[0], "/a.csv") || !strings.HasSuffix(split[1], "/b.csv") {
		t.Errorf("--key Name=a,b: %v", split)
	}
	exact := files(runOK(t, dir, "--json", "locate", "c", "--value", "Name=a,b"))
	if len(exact) != 1 || !strings.HasSuffix(exact[0], "/comma.csv") {
		t.Errorf("--value Name=a,b: %v", exact)
	}

	// A row index whose keys hold "..".
	type row struct {
		K string `parquet:"k"`
		V int64  `parquet:"v"`
	}
	pq := t.TempDir()
	if err := parquet.WriteFile(filepath.Join(pq, "p.parquet"), []row{{"x..y", 1}, {"x", 2}, {"y", 3}}); err != nil {
		t.Fatal(err)
	}
	pschema := filepath.Join(t.TempDir(), "p.json")
	os.WriteFile(pschema, []byte(`{"type":"struct","fields":[{"name":"k","type":"string","nullable":true,"metadata":{}},{"name":"v","type":"long","nullable":true,"metadata":{}}]}`), 0o644)
	runOK(t, dir, "create", "p", "--format", "parquet", "--schema", pschema)
	runOK(t, dir, "add-files", "p", pq)
	runOK(t, dir, "add-row-index", "p", "--key", "k")
	if code, _, _ := run(t, dir, "lookup", "p", "--key", "k=x..y"); code == 0 {
		t.Errorf("--key k=x..y on a hash row index should be a range, refused")
	}
	res := decode(t, runOK(t, dir, "--json", "lookup", "p", "--value", "k=x..y"))
	rows, _ := res["rows"].([]any)
	if len(rows) != 1 {
		t.Fatalf("--value k=x..y: %v", res)
	}
	if code, _, _ := run(t, dir, "lookup", "p", "--value", "k=x", "--key", "k=x"); code != 2 {
		t.Errorf("--key and --value together: exit %d, want 2", code)
	}
}
