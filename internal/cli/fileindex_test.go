package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFileIndexCommands(t *testing.T) {
	dir := t.TempDir()
	data, _ := filepath.Abs(testdata)
	p0, p1 := filepath.Join(data, "table1_part0.csv"), filepath.Join(data, "table1_part1.csv")
	u0, u1 := "file://"+filepath.ToSlash(p0), "file://"+filepath.ToSlash(p1)
	mustRun := func(args ...string) string { t.Helper(); return runOK(t, dir, args...) }
	mustRun("create", "t1", "--format", "csv", "--read-option", "header=true", "--infer-from", p0)
	mustRun("add-files", "t1", p0, p1)
	mustRun("add-index", "t1", "--regular", "Id", "--regular", "Version", "--range", "Value")
	again := decode(t, mustRun("--json", "add-index", "t1", "--regular", "Id", "--range", "Value"))
	if len(again["added"].([]any)) != 0 || len(again["already_registered"].([]any)) != 2 {
		t.Fatalf("re-registering must be reported as a no-op: %v", again)
	}
	// A malformed computed expression is refused before it is registered
	// (definitions can never be removed), so updates keep working.
	code, out, _ := run(t, dir, "--json", "add-index", "t1", "--computed", "bad=substring(Id,")
	if code != 1 || decode(t, out)["kind"] != "computed expression" || !strings.Contains(out, "bad") {
		t.Fatalf("malformed computed: %d %s", code, out)
	}
	upd := decode(t, mustRun("--json", "update", "t1"))
	if upd["new_files"] != 2.0 {
		t.Fatalf("update: %v", upd)
	}
	if st, ok := upd["stages"].(map[string]any); !ok || st["read_seconds"] == nil || st["snapshot_seconds"] == nil || upd["snapshot_from_memory"] != true {
		t.Fatalf("update stages: %v", upd)
	}
	// A second update has nothing to do.
	if upd := decode(t, mustRun("--json", "update", "t1")); upd["new_files"] != 0.0 || upd["batches"] != 0.0 {
		t.Fatalf("second update: %v", upd)
	}
	locate := func(keys ...string) []string {
		args := []string{"--json", "locate", "t1"}
		for _, k := range keys {
			args = append(args, "--key", k)
		}
		return toStrings(decode(t, mustRun(args...))["files"])
	}
	for _, tc := range []struct {
		keys []string
		want []string
	}{
		{[]string{"Version=3", "Id=1"}, []string{u1}}, // §8.8: string literals match ints
		{[]string{"Value=4.5"}, []string{u0, u1}},     // range: [3.0,5.0] and [2.0,9.0] both hold 4.5
		{[]string{"Value=9"}, []string{u1}},
		{[]string{"Value=-1"}, nil},
		{[]string{"Id=4"}, []string{u1}},
		{[]string{"Id=1,4"}, []string{u0, u1}},
	} {
		if got := locate(tc.keys...); !slices.Equal(got, tc.want) {
			t.Errorf("locate %v = %v, want %v", tc.keys, got, tc.want)
		}
	}
	code, out, _ = run(t, dir, "--json", "locate", "t1", "--key", "Nope=1")
	if code != 1 || decode(t, out)["kind"] != "column not found" {
		t.Errorf("unknown column: %d %s", code, out)
	}

	keys := filepath.Join(t.TempDir(), "q.csv")
	os.WriteFile(keys, []byte("Id,Version\n1,3\n"), 0o644)
	if out := mustRun("join", "t1", "--keys", keys, "--on", "Version,Id", "--how", "semi"); out != "Version,Id\n3,1\n" { // join columns first, as Spark
		t.Errorf("semi join: %q", out)
	}
	if code, _, errOut := run(t, dir, "join", "t1", "--keys", keys, "--on", "Id", "--explain"); code != 0 || !strings.Contains(errOut, "3 row(s) from 2 located file(s)") || !strings.Contains(errOut, "path ") || !strings.Contains(errOut, "file(s) located") {
		t.Errorf("join --explain: %d %q", code, errOut)
	}
	// With --json the summary and --explain on stderr are JSON lines.
	code, out, errOut := run(t, dir, "--json", "join", "t1", "--keys", keys, "--on", "Id", "--explain")
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Fatalf("join --json --explain: %d %q %q", code, out, errOut)
	}
	evs := checkEventLines(t, "join --json --explain", errOut)
	if len(evs) != 2 || evs[0]["event"] != "summary" || evs[0]["rows"] != 3.0 || evs[0]["files_located"] != 2.0 ||
		evs[1]["event"] != "explain" || evs[1]["path"] != "filtered" || evs[1]["rows_scanned"] != 8.0 {
		t.Errorf("join --json --explain stderr: %q", errOut)
	}
	out = mustRun("--json", "join", "t1", "--keys", keys, "--on", "Version", "--how", "full")
	if strings.Count(out, "\n") != 4 || !strings.Contains(out, `"Id_2":`) {
		t.Errorf("full join on Version: want 4 rows (only part1 located) with the repeated Id renamed, got %q", out)
	}
	pq := filepath.Join(t.TempDir(), "out.parquet")
	mustRun("join", "t1", "--keys", keys, "--on", "Id", "--out", pq)
	if st, err := os.Stat(pq); err != nil || st.Size() == 0 {
		t.Errorf("--out parquet: %v", err)
	}
	stats := decode(t, mustRun("--json", "stats", "t1"))["columns"].([]any)
	if len(stats) != 2 {
		t.Errorf("stats: %v", stats)
	}

	mustRun("delete-files", "t1", p0)
	if got := locate("Id=1"); !slices.Equal(got, []string{u1}) {
		t.Errorf("after delete-files: %v", got)
	}
	if files := toStrings(mapField(decode(t, mustRun("--json", "files", "t1"))["files"], "filename")); !slices.Equal(files, []string{u1}) {
		t.Errorf("tracked after delete-files: %v", files)
	}
	mustRun("compact", "t1")
	mustRun("vacuum", "t1", "--retain", "0s")
	if got := locate("Id=1"); !slices.Equal(got, []string{u1}) {
		t.Errorf("after compact+vacuum: %v", got)
	}
}

func mapField(v any, key string) any {
	var out []any
	for _, e := range v.([]any) {
		out = append(out, e.(map[string]any)[key])
	}
	return out
}
