package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLocateKeysFile: locate --keys reads CSV, JSON lines and Parquet keys,
// answers the union and, with --per-key, each distinct key; --explain says
// whether the answer came from the locate snapshot the update wrote.
func TestLocateKeysFile(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	var uris []string
	for f := range 3 {
		var b strings.Builder
		b.WriteString("id,v\n")
		for r := range 5 {
			fmt.Fprintf(&b, "%d,%d\n", f*10+r, f) // file f holds ids f*10 .. f*10+4
		}
		fmt.Fprintf(&b, "%d,%d\n", 100, f) // every file holds 100
		p := filepath.Join(data, fmt.Sprintf("p%d.csv", f))
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		uris = append(uris, "file://"+p)
	}
	mustRun := func(args ...string) string { t.Helper(); return runOK(t, dir, args...) }
	mustRun("create", "k", "--format", "csv", "--read-option", "header=true", "--infer-from", filepath.Join(data, "p0.csv"))
	mustRun(append([]string{"add-files", "k"}, filepath.Join(data, "p0.csv"), filepath.Join(data, "p1.csv"), filepath.Join(data, "p2.csv"))...)
	mustRun("add-index", "k", "--regular", "id", "--range", "v")
	mustRun("update", "k")

	write := func(name, text string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csvKeys := write("keys.csv", "id,v\n1,0\n12,1\n999,0\n1,0\n100,2\n")
	jsonKeys := write("keys.json", `{"id":1,"v":0}`+"\n"+`{"id":12,"v":1}`+"\n"+`{"id":999,"v":0}`+"\n"+`{"id":100,"v":2}`+"\n")
	pqKeys := filepath.Join(t.TempDir(), "keys.parquet")
	mustRun("join", "k", "--keys", csvKeys, "--on", "id", "--how", "semi", "--select", "id,v", "--out", pqKeys)

	// Union of one column: files holding 1, 12 or 100 (all three).
	for _, keys := range []string{csvKeys, jsonKeys} {
		got := decode(t, mustRun("--json", "locate", "k", "--keys", keys, "--on", "id"))
		if files := toStrings(got["files"]); !slices.Equal(files, uris) || got["file_count"] != 3.0 {
			t.Errorf("%s: union %v", filepath.Base(keys), got)
		}
	}

	// Per key on two columns: each key's own AND.
	got := decode(t, mustRun("--json", "locate", "k", "--keys", csvKeys, "--per-key", "--explain"))
	per := got["per_key"].([]any)
	want := []struct {
		id, v float64
		files []string
	}{{1, 0, uris[:1]}, {12, 1, uris[1:2]}, {999, 0, nil}, {100, 2, uris[2:]}}
	if len(per) != len(want) {
		t.Fatalf("per_key: %v", per)
	}
	for i, w := range want {
		e := per[i].(map[string]any)
		key := e["key"].(map[string]any)
		// Numbers stay numbers.
		if key["id"] != w.id || key["v"] != w.v {
			t.Errorf("key %d: %v, want id=%v v=%v", i, key, w.id, w.v)
		}
		if files := toStrings(e["files"]); !slices.Equal(files, w.files) || e["file_count"] != float64(len(w.files)) {
			t.Errorf("key %v: files %v, want %v", key, files, w.files)
		}
	}
	if files := toStrings(got["files"]); !slices.Equal(files, uris) {
		t.Errorf("per-key union %v", files)
	}
	plan := got["plan"].(map[string]any)
	if plan["snapshot"] != true || plan["note"] != "" || plan["version"].(float64) < 0 {
		t.Errorf("plan %v: want the locate snapshot", plan)
	}

	// Parquet keys (ids 1, 12, 100 that the semi join kept), text output.
	out := mustRun("locate", "k", "--keys", pqKeys, "--on", "id", "--per-key", "--explain")
	for _, line := range []string{"id=1: 1 file(s)\n  " + uris[0] + "\n", "id=100: 3 file(s)\n", "all keys: 3 file(s)\n", "from the locate snapshot"} {
		if !strings.Contains(out, line) {
			t.Errorf("text output lacks %q:\n%s", line, out)
		}
	}

	// Without the snapshot (as an index the Spark library wrote), the same
	// answer by a scan, and the plan says why.
	if err := os.RemoveAll(filepath.Join(dir, "indexes", "k", "_ariadne_locate")); err != nil {
		t.Fatal(err)
	}
	again := decode(t, mustRun("--json", "locate", "k", "--keys", csvKeys, "--per-key", "--explain"))
	if fmt.Sprint(again["per_key"]) != fmt.Sprint(got["per_key"]) {
		t.Errorf("scan per_key %v, snapshot %v", again["per_key"], got["per_key"])
	}
	if p := again["plan"].(map[string]any); p["snapshot"] != false || !strings.Contains(p["note"].(string), "no locate snapshot") {
		t.Errorf("plan without snapshot: %v", p)
	}

	// --key keeps working, and the two forms exclude each other.
	if files := toStrings(decode(t, mustRun("--json", "locate", "k", "--key", "id=11,22"))["files"]); !slices.Equal(files, uris[1:]) {
		t.Errorf("--key: %v", files)
	}
	for _, args := range [][]string{{"locate", "k"}, {"locate", "k", "--key", "id=1", "--keys", csvKeys}, {"locate", "k", "--key", "id=1", "--per-key"}} {
		if code, _, _ := run(t, dir, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)", args, code)
		}
	}
	if code, out, _ := run(t, dir, "--json", "locate", "k", "--keys", csvKeys, "--on", "nope"); code != 2 || !strings.Contains(out, "nope") {
		t.Errorf("--on nope: %d %s", code, out)
	}
}
