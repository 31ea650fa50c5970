package fileindex

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/proc"
)

// TestSweepSpillDirs: the spill folder of a process that no longer exists
// is removed; those of live processes, of another pid namespace and
// unrelated folders stay.
func TestSweepSpillDirs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("pid namespaces are known on Linux only")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	ns := namespaceInode()
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(p, "duckdb_temp_storage"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dead := mk("ariadne-update-p" + itoa(cmd.Process.Pid) + "n" + ns + "-123")
	keep := []string{
		mk("ariadne-update-p" + itoa(os.Getppid()) + "n" + ns + "-1"),          // alive
		mk("ariadne-join-p" + itoa(os.Getpid()) + "n" + ns + "-2"),             // ourselves
		mk("ariadne-update-p" + itoa(cmd.Process.Pid) + "n" + ns + "9" + "-3"), // another namespace
		mk("ariadne-update-123456"),                                            // older naming: unknown owner
		mk("other-p" + itoa(cmd.Process.Pid) + "n" + ns + "-4"),                // not ours
	}
	// A killed row index build's and prepare's folders (named by
	// proc.SpillPattern) are removed as well.
	deadRI := mk("ariadne-rowindex-p" + itoa(cmd.Process.Pid) + "n" + ns + "-5")
	deadPrep := mk("ariadne-prepare-p" + itoa(cmd.Process.Pid) + "n" + ns + "-6")
	got := sweepSpillDirs(dir)
	slices.Sort(got)
	if want := []string{deadPrep, deadRI, dead}; !slices.Equal(got, want) {
		t.Fatalf("removed %v, want %v", got, want)
	}
	for _, p := range []string{dead, deadRI, deadPrep} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("dead process's folder %s still there", p)
		}
	}
	for _, kind := range []string{"rowindex", "prepare"} {
		if pat := proc.SpillPattern(kind); !spillName.MatchString(strings.TrimSuffix(pat, "*")+"x") || !strings.HasPrefix(pat, "ariadne-"+kind+"-p") {
			t.Errorf("pattern %s is not swept", pat)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed", p)
		}
	}
	// newSpillDir names its folder so that the sweep recognises it.
	p, err := newSpillDir("update")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(p)
	if m := spillName.FindStringSubmatch(filepath.Base(p)); m == nil || m[1] != itoa(os.Getpid()) || m[2] != ns || !strings.HasPrefix(filepath.Base(p), "ariadne-update-") {
		t.Errorf("spill folder %s", p)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
