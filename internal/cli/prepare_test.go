package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/prepared"
)

func TestPrepareCommand(t *testing.T) {
	dir := t.TempDir()
	lakeDir, files := genLake(t, lakegen.Config{Seed: 3, TargetBytes: 1 << 20, Days: 2, FilesPerDay: 2, Users: 300, Tracks: 500})
	var srcRows int64
	for _, f := range files {
		srcRows += f.Rows
	}
	out := filepath.Join(t.TempDir(), "prepared")
	code, stdout, stderr := run(t, dir, "--json", "prepare", lakeDir, "--out", out, "--key", "user_id", "--sort", "ts",
		"--buckets", "2", "--page-bytes", "4096", "--row-group-rows", "5000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res := decode(t, stdout)
	if res["rows"] != float64(srcRows) || res["sources"] != 4.0 || len(res["files"].([]any)) != 4 || res["pages"].(float64) == 0 {
		t.Fatalf("result %v", res)
	}
	// --json: progress as JSON lines on stderr.
	if !strings.Contains(stderr, `"phase":"read","done":4,"total":4`) {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	// The partition folders are kept; every file carries the marker.
	for _, f := range res["files"].([]any) {
		key := f.(map[string]any)["key"].(string)
		b, err := os.ReadFile(filepath.Join(out, key))
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		m, ok, err := prepared.MarkerOf(pf)
		if !ok || err != nil || m.Key != "user_id" || m.PageBytes != 4096 || m.Buckets != 2 || !strings.HasPrefix(key, "date=2024-06-0") {
			t.Errorf("%s: marker %+v %v %v", key, m, ok, err)
		}
	}
	// Flags set are not chosen; the codec and encodings are.
	ch := res["choices"].(map[string]any)
	if ch["page_bytes"] != 4096.0 || ch["buckets"] != 2.0 || ch["row_group_rows"] != 5000.0 || ch["codec"] != "ZSTD" ||
		fmt.Sprint(ch["chosen"]) != "[codec encodings]" {
		t.Errorf("choices %v", ch)
	}
	// Human output, every setting chosen from the data.
	code, stdout, stderr = run(t, dir, "prepare", filepath.Join(lakeDir, files[0].Key), "--out", out+"2", "--key", "user_id")
	if code != 0 || !strings.Contains(stdout, "prepared 1 source file(s)") || !strings.Contains(stdout, "pages") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	for _, want := range []string{"page bytes      65536 (chosen: ", "buckets         1 (chosen: ", "row group rows", "codec           ZSTD (chosen",
		"user_id", "track_uri", "measured: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("human output lacks %q:\n%s", want, stdout)
		}
	}
	// Without tuning flags; and the same with a tiny memory budget: sorted
	// externally in runs, the same files byte for byte.
	outs := []string{out + "4", out + "5"}
	var jsons []map[string]any
	for i, extra := range [][]string{nil, {"--memory", "1MiB", "--temp-dir", t.TempDir()}} {
		code, stdout, stderr := run(t, dir, append([]string{"--json", "prepare", lakeDir, "--out", outs[i], "--key", "user_id", "--sort", "ts"}, extra...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		jsons = append(jsons, decode(t, stdout))
	}
	if jsons[0]["runs"] != 0.0 || jsons[1]["runs"].(float64) < 4 {
		t.Errorf("runs %v and %v: want none, then several", jsons[0]["runs"], jsons[1]["runs"])
	}
	ch = jsons[0]["choices"].(map[string]any)
	if fmt.Sprint(ch["chosen"]) != "[buckets codec encodings page_bytes row_group_rows]" || ch["basis"].(map[string]any)["rows"] != float64(srcRows) {
		t.Errorf("choices %v", ch)
	}
	for _, f := range jsons[0]["files"].([]any) {
		key := f.(map[string]any)["key"].(string)
		a, err := os.ReadFile(filepath.Join(outs[0], key))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(outs[1], key))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: the externally sorted file differs (%v)", key, err)
		}
	}
	// Refuses to overwrite; an unknown key is a typed error; missing flags are usage errors.
	for _, c := range []struct {
		args []string
		code int
		kind string
	}{
		{[]string{"prepare", lakeDir, "--out", out, "--key", "user_id", "--buckets", "2"}, 1, "precondition failed"},
		{[]string{"prepare", lakeDir, "--out", out + "3", "--key", "nope"}, 1, "column not found"},
		{[]string{"prepare", lakeDir, "--out", out + "3", "--key", "user_id", "--sort", "user_id"}, 1, "invalid argument"},
		{[]string{"prepare", lakeDir, "--key", "user_id"}, 2, "usage"},
		{[]string{"prepare", lakeDir, "--out", out + "3", "--key", "user_id", "--memory", "lots"}, 2, "usage"},
		{[]string{"prepare", lakeDir, "--out", out + "3", "--key", "user_id", "--codec", "lzma"}, 2, "usage"},
		{[]string{"prepare", lakeDir, "--out", out + "3", "--key", "user_id", "--encoding", "nope=plain"}, 1, "column not found"},
	} {
		code, stdout, _ := run(t, dir, append([]string{"--json"}, c.args...)...)
		if code != c.code || decode(t, stdout)["kind"] != c.kind {
			t.Errorf("%v: exit %d, %s; want exit %d kind %q", c.args, code, stdout, c.code, c.kind)
		}
	}
	if _, err := os.Stat(out + "3"); err == nil {
		if ents, _ := os.ReadDir(out + "3"); len(ents) > 0 {
			t.Errorf("failed runs left %d entries", len(ents))
		}
	}
}
