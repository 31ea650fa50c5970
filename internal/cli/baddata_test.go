package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ariadne-go/ariadne/internal/testfixture"
)

// TestBadDataRefused runs update, add-row-index and prepare over each file
// of parquet-testing's bad_data/: every one is refused with a typed error
// (never a panic, never the untyped kind "error") and leaves the index as
// it was, or is read as pyarrow 26.0.1 reads it. ok lists what succeeds:
// ARROW-GH-43605 (pyarrow too reads its bad RLE run as 21,186 zeros) and
// the int32 column of ARROW-GH-41317/41321, which pyarrow reads alone
// (their corruption is in other columns). ARROW-GH-47662 and PARQUET-1481
// are refused by every command as "corrupt file".
func TestBadDataRefused(t *testing.T) {
	type cmdOK struct{ update, rowIndex, prepare bool }
	files := []struct {
		name, key, typ string
		ok             cmdOK
		corrupt        bool // every command refuses it as "corrupt file"
	}{
		{"ARROW-GH-41317", "int32", `"integer"`, cmdOK{update: true, rowIndex: true}, false},
		{"ARROW-GH-41321", "int32", `"integer"`, cmdOK{update: true}, false},
		{"ARROW-GH-43605", "min_fl", `"integer"`, cmdOK{true, true, true}, false},
		{"ARROW-GH-45185", "x", `{"type":"array","elementType":"integer","containsNull":false}`, cmdOK{}, false},
		{"ARROW-GH-47662", "flba_field", `"binary"`, cmdOK{}, true},
		{"ARROW-RS-GH-6229-DICTHEADER", "nation_key", `"integer"`, cmdOK{}, true},
		{"ARROW-RS-GH-6229-LEVELS", "outer", `{"type":"array","elementType":{"type":"struct","fields":[{"name":"c","type":"string","nullable":true,"metadata":{}}]},"containsNull":true}`, cmdOK{}, false},
		{"PARQUET-1481", "a", `"integer"`, cmdOK{}, true},
	}
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			dir, data := t.TempDir(), t.TempDir()
			b, err := os.ReadFile(filepath.Join(testfixture.Testdata(), "parquet-testing", "bad_data", f.name+".parquet"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(data, f.name+".parquet"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			schema := filepath.Join(t.TempDir(), "schema.json")
			os.WriteFile(schema, []byte(`{"type":"struct","fields":[{"name":"`+f.key+`","type":`+f.typ+`,"nullable":true,"metadata":{}}]}`), 0o644)
			runOK(t, dir, "create", "ix", "--format", "parquet", "--schema", schema)
			runOK(t, dir, "add-index", "ix", "--regular", f.key)
			runOK(t, dir, "add-files", "ix", data)
			check := func(what string, ok bool, args ...string) {
				t.Helper()
				code, out, stderr := run(t, dir, append([]string{"--json"}, args...)...)
				if ok {
					if code != 0 {
						t.Errorf("%s: exit %d: %s", what, code, stderr)
					}
					return
				}
				if code == 0 {
					t.Errorf("%s accepted the file: %s", what, out)
					return
				}
				res := decode(t, out)
				kind, _ := res["kind"].(string)
				if kind == "" || kind == "error" || (f.corrupt && kind != "corrupt file") {
					t.Errorf("%s: kind %q: %v", what, kind, res["error"])
				}
				if f.corrupt && !strings.Contains(res["error"].(string), f.name+".parquet") {
					t.Errorf("%s: the error does not name the file: %v", what, res["error"])
				}
			}
			check("update", f.ok.update, "update", "ix")
			check("add-row-index", f.ok.rowIndex, "add-row-index", "ix", "--key", f.key)
			check("prepare", f.ok.prepare, "prepare", data, "--out", filepath.Join(t.TempDir(), "out"), "--key", f.key)
			// Nothing lost: the file is still tracked; a refused build left
			// no row index.
			if out := runOK(t, dir, "files", "ix"); !strings.Contains(out, f.name+".parquet") {
				t.Errorf("the file is no longer tracked: %s", out)
			}
			if out := runOK(t, dir, "describe", "ix"); !f.ok.rowIndex && !strings.Contains(out, "row indexes: none") {
				t.Errorf("a refused build left a row index: %s", out)
			}
		})
	}
}

// lz4ChildEnv marks the subprocess of TestCorruptLZ4RawRefused.
const lz4ChildEnv = "ARIADNE_CLI_LZ4_CHILD"

// TestCorruptLZ4RawRefused: update, add-row-index and prepare over a data
// file whose LZ4_RAW page no buffer decodes (parquet-go v0.32.0's codec
// allocated until the process died) refuse it as "corrupt file", naming
// it. The commands run in a subprocess whose address space is capped at
// 6 GiB, so a regression fails this test instead of killing the test
// binary.
func TestCorruptLZ4RawRefused(t *testing.T) {
	file, _ := testfixture.CorruptLZ4Raw(t)
	if os.Getenv(lz4ChildEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCorruptLZ4RawRefused$", "-test.v")
		cmd.Env = append(os.Environ(), lz4ChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			if len(out) > 3000 {
				out = out[:3000]
			}
			t.Fatalf("subprocess (6 GiB address space): %v\n%s", err, out)
		}
		return
	}
	lim := syscall.Rlimit{Cur: 6 << 30, Max: 6 << 30}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		t.Fatal(err)
	}
	dir, data := t.TempDir(), t.TempDir()
	path := filepath.Join(data, "corrupt_lz4_raw.parquet")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	// c0, the column of the corrupt page, is the key: every command reads it.
	runOK(t, dir, "create", "ix", "--format", "parquet", "--infer-from", testfixture.LZ4RawFile())
	runOK(t, dir, "add-index", "ix", "--regular", "c0")
	runOK(t, dir, "add-files", "ix", data)
	for _, args := range [][]string{
		{"update", "ix"},
		{"add-row-index", "ix", "--key", "c0"},
		{"prepare", data, "--out", filepath.Join(t.TempDir(), "prep"), "--key", "c0", "--buckets", "1"},
	} {
		code, out, _ := run(t, dir, append([]string{"--json"}, args...)...)
		if code != 1 {
			t.Errorf("%v: exit %d: %s", args, code, out)
			continue
		}
		res := decode(t, out)
		if res["kind"] != "corrupt file" || !strings.Contains(res["error"].(string), "corrupt_lz4_raw.parquet") {
			t.Errorf("%v: %v, want kind \"corrupt file\" naming the file", args, res)
		}
	}
}

// TestLyingPageSizeRefused: a SNAPPY file whose first page header claims
// 1 GiB (its bytes otherwise sound) is refused by update, add-row-index and
// prepare as "corrupt file" naming the file, before parquet-go allocates
// the claim. Without the page guard's size checks parquet-go allocates the
// GiB, decodes the small page into it and every command succeeds.
func TestLyingPageSizeRefused(t *testing.T) {
	sound := testfixture.SoundFile(t, &parquet.Snappy, 2000)
	dir, data, ref := t.TempDir(), t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ref, "sound.parquet"), sound, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "lying_size.parquet"), testfixture.InflatedPage(t, sound, 1<<30), 0o644); err != nil {
		t.Fatal(err)
	}
	runOK(t, dir, "create", "ix", "--format", "parquet", "--infer-from", filepath.Join(ref, "sound.parquet"))
	runOK(t, dir, "add-index", "ix", "--regular", "id")
	runOK(t, dir, "add-files", "ix", data)
	for _, args := range [][]string{
		{"update", "ix"},
		{"add-row-index", "ix", "--key", "id"},
		{"prepare", data, "--out", filepath.Join(t.TempDir(), "prep"), "--key", "id", "--buckets", "1"},
	} {
		code, out, _ := run(t, dir, append([]string{"--json"}, args...)...)
		if code != 1 {
			t.Errorf("%v: exit %d: %s", args, code, out)
			continue
		}
		res := decode(t, out)
		if res["kind"] != "corrupt file" || !strings.Contains(res["error"].(string), "lying_size.parquet") || !strings.Contains(res["error"].(string), "corrupt page") {
			t.Errorf("%v: %v, want kind \"corrupt file\" naming the file and the page", args, res)
		}
	}
}
