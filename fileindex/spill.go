package fileindex

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/ariadne-go/ariadne/internal/proc"
)

// Spill folders: every embedded DuckDB database of the file index spills to
// a private folder in the system's temporary folder ($TMPDIR), removed when
// the database closes. A killed run cannot remove its own, so each name
// records its process (pid and pid namespace) and the next update removes
// the folders of processes of this namespace that no longer exist.

// spillName matches the folders newSpillDir creates: ariadne-<kind>-p<pid>n<namespace inode>-<random>.
var spillName = regexp.MustCompile(`^ariadne-[a-z]+-p([0-9]+)n([0-9]+)-`)

// newSpillDir creates a spill folder for kind ("update", "join", "check").
func newSpillDir(kind string) (string, error) {
	return os.MkdirTemp("", proc.SpillPattern(kind))
}

// namespaceInode returns the inode number of this process's pid namespace
// ("4026531836" of "pid:[4026531836]"), "0" when unknown.
func namespaceInode() string { return proc.NamespaceInode() }

// sweepSpillDirs removes the spill folders in dir (the temporary folder)
// whose process, in this pid namespace, no longer exists, and returns their
// paths. Folders of other namespaces (containers sharing the folder) or of
// an unknown namespace are never removed: their pids mean nothing here.
// Errors are ignored: the sweep is housekeeping and must not fail an update.
func sweepSpillDirs(dir string) []string {
	self := namespaceInode()
	if self == "0" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		m := spillName.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil || m[2] != self {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() || !proc.Gone(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if os.RemoveAll(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}
