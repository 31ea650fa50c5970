package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVacuumSweepsTemps: the 0-byte ".ariadne-tmp-*" files a killed write
// leaves in an index's folders are deleted by vacuum once older than the
// retention (and an hour); younger ones, perhaps writes in flight, stay.
func TestVacuumSweepsTemps(t *testing.T) {
	dir := t.TempDir()
	schemaFile := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(schemaFile, []byte(`{"type":"struct","fields":[{"name":"Id","type":"integer","nullable":true,"metadata":{}}]}`), 0o644)
	runOK(t, dir, "create", "x", "--format", "csv", "--schema", schemaFile)
	data := filepath.Join(t.TempDir(), "a.csv")
	os.WriteFile(data, []byte("Id\n1\n"), 0o644)
	runOK(t, dir, "add-files", "x", data)

	temp := func(rel string, age time.Duration) string {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		mt := time.Now().Add(-age)
		os.Chtimes(p, mt, mt)
		return p
	}
	stale := []string{
		temp("indexes/x/.ariadne-tmp-1", 200*time.Hour),
		temp("filelists/[ariadne_index] x/_delta_log/.ariadne-tmp-2", 200*time.Hour),
	}
	young := temp("indexes/x/.ariadne-tmp-3", 30*time.Minute)
	retained := temp("indexes/x/.ariadne-tmp-4", 100*time.Hour) // younger than the default 168 h

	out := runOK(t, dir, "vacuum", "x")
	if !strings.Contains(out, "deleted 2 temporary file(s) left by killed writes") {
		t.Errorf("vacuum output: %s", out)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s not deleted", p)
		}
	}
	for _, p := range []string{young, retained} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s deleted: %v", p, err)
		}
	}
	// A zero retention still spares temporary files younger than an hour.
	out = runOK(t, dir, "vacuum", "x", "--retain", "0s")
	if !strings.Contains(out, "deleted 1 temporary file(s)") {
		t.Errorf("vacuum --retain 0s output: %s", out)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("young temp deleted: %v", err)
	}
}
