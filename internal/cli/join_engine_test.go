package cli

import (
	"strings"
	"testing"
)

// TestJoinSparkOutFlags: join's --spark-out, --spark-out-format and
// --spark-out-mode are checked before anything is read (Spark's writes are
// tested against a live Spark Connect server in interop/:
// TestSparkEngineJoin).
func TestJoinSparkOutFlags(t *testing.T) {
	dir := t.TempDir()
	base := []string{"join", "x", "--keys", "k.csv", "--on", "id"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--spark-out", "/tmp/o"}, "--spark-out needs --engine spark"},
		{[]string{"--spark-out-format", "delta"}, "--spark-out-format and --spark-out-mode need --spark-out"},
		{[]string{"--spark-out-mode", "append"}, "--spark-out-format and --spark-out-mode need --spark-out"},
		{[]string{"--engine", "spark", "--spark", "sc://h:1", "--spark-out", "/tmp/o", "--spark-out-format", "orc"}, `output format "orc": want parquet or delta`},
		{[]string{"--engine", "spark", "--spark", "sc://h:1", "--spark-out", "/tmp/o", "--spark-out-mode", "ignore"}, `output mode "ignore": want error, overwrite or append`},
		{[]string{"--engine", "spark", "--spark", "sc://h:1", "--spark-out", "/tmp/o", "--out", "x.csv"}, "--out and --spark-out exclude each other"},
	} {
		args := append(append([]string{}, base...), tc.args...)
		code, _, errs := run(t, dir, args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", tc.args, code, errs, tc.want)
		}
	}
}
