package cli

import (
	"strings"
	"testing"
)

// TestUpdateEngineFlags: update's and add-row-index's --engine and --spark
// are checked before anything is read or written (the Spark paths
// themselves are tested against a live Spark Connect server in interop/:
// TestSparkEngineUpdate, TestSparkEngineRowIndex).
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
		{[]string{"add-row-index", "x", "--key", "k", "--engine", "flink"}, `add-row-index: --engine "flink": want duckdb or spark`},
		{[]string{"add-row-index", "x", "--key", "k", "--engine", "spark"}, "add-row-index: --engine spark needs --spark"},
		{[]string{"add-row-index", "x", "--key", "k", "--spark", "sc://h:15002"}, "add-row-index: --spark needs --engine spark"},
	} {
		code, _, errs := run(t, dir, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", tc.args, code, errs, tc.want)
		}
	}
}
