package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONErrorOnly: with --json a failing command prints one JSON object
// {"error", "kind"} on stdout and nothing else, on stdout or stderr (the
// error is not repeated as text); without --json the error is a line on
// stderr and stdout is empty. It holds for failures of the command, of
// its flags (also when the bad flag comes before --json is parsed) and of
// its arguments.
func TestJSONErrorOnly(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		kind string
	}{
		{[]string{"describe", "nosuch"}, 1, "index not found"},
		{[]string{"lookup", "nosuch", "--key", "a=1"}, 1, "index not found"},
		{[]string{"--store", "mem://", "list"}, 2, "usage"},
		{[]string{"locate", "nosuch"}, 2, "usage"},
		{[]string{"describe", "--no-such-flag"}, 2, "usage"},
		{[]string{"no-such-command"}, 2, "usage"},
	} {
		for _, jsonFirst := range []bool{true, false} {
			args := append([]string{"--json"}, c.args...)
			if !jsonFirst {
				args = append(append([]string(nil), c.args...), "--json")
			}
			code, out, errs := run(t, dir, args...)
			if code != c.code {
				t.Errorf("%v: exit %d, want %d", args, code, c.code)
			}
			if errs != "" {
				t.Errorf("%v: stderr %q, want nothing", args, errs)
			}
			dec := json.NewDecoder(strings.NewReader(out))
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				t.Errorf("%v: stdout %q is not a JSON object: %v", args, out, err)
				continue
			}
			if dec.More() {
				t.Errorf("%v: more than one JSON document on stdout: %q", args, out)
			}
			msg, _ := m["error"].(string)
			if len(m) != 2 || msg == "" || m["kind"] != c.kind {
				t.Errorf("%v: %v, want {error, kind %q}", args, m, c.kind)
			}
		}
		code, out, errs := run(t, dir, c.args...)
		if code != c.code || out != "" || !strings.HasPrefix(errs, "ariadne: ") {
			t.Errorf("%v without --json: exit %d, stdout %q, stderr %q", c.args, code, out, errs)
		}
	}
}
