package cli

import (
	"strings"
	"testing"
)

// TestUpdateEngineFlags: update's --engine and --spark are checked before
// anything is read or written (the Spark path itself is tested against a
// live Spark Connect server in interop/: TestSparkEngineUpdate).
func TestUpdateEngineFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"update", "x", "--engine", "flink"}, `--engine "flink": want duckdb or spark`},
		{[]string{"update", "x", "--engine", "spark"}, "--engine spark needs --spark"},
		{[]string{"update", "x", "--spark", "sc://h:15002"}, "--spark needs --engine spark"},
		{[]string{"update", "x", "--set", "engine=spark"}, "--engine spark needs --spark"},
	} {
		code, _, errs := run(t, dir, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", tc.args, code, errs, tc.want)
		}
	}
}
