package index

import (
	"regexp"
	"strings"

	"github.com/ariadne-go/ariadne/aerr"
)

// Layout of the store root (spec §4.1). Keys are relative to the root.
const (
	indexesDir    = "indexes"
	fileListsDir  = "filelists"
	tempDir       = "_temp"
	fileListPrefx = "[ariadne_index] "
)

// ValidateName applies the index name rules of §2.1: non-blank, no '/', '\'
// or NUL, not starting with '.', not "..". Violations are ErrInvalidArgument.
// The rules keep every index inside <root>/indexes: a valid name is exactly
// one path segment.
func ValidateName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return aerr.Invalid("Index name must not be null or blank")
	case strings.ContainsAny(name, "/\\\x00"):
		return aerr.Invalid("Index name '%s' must not contain '/', '\\' or NUL characters", strings.ReplaceAll(name, "\x00", `\0`))
	case name == "..":
		return aerr.Invalid("Index name must not be '..'")
	case strings.HasPrefix(name, "."):
		return aerr.Invalid("Index name '%s' must not start with '.'", name)
	}
	return nil
}

// FileListName is the FileList name of an index: "[ariadne_index] <name>".
func FileListName(name string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	return fileListPrefx + name, nil
}

// Paths are the keys of one index's objects under the store root.
type Paths struct {
	Dir          string // indexes/<name>
	Metadata     string // indexes/<name>/metadata.json
	Main         string // indexes/<name>/index
	Staging      string // indexes/<name>/staging
	LargeIndexes string // indexes/<name>/large_indexes
	UpdateLock   string // indexes/<name>/.update.lock
	FileListLock string // indexes/<name>/.filelist.lock
	FileList     string // filelists/[ariadne_index] <name>
}

// PathsFor returns the layout of a validated index name.
func PathsFor(name string) (Paths, error) {
	if err := ValidateName(name); err != nil {
		return Paths{}, err
	}
	dir := indexesDir + "/" + name
	return Paths{
		Dir:          dir,
		Metadata:     dir + "/metadata.json",
		Main:         dir + "/index",
		Staging:      dir + "/staging",
		LargeIndexes: dir + "/large_indexes",
		UpdateLock:   dir + "/.update.lock",
		FileListLock: dir + "/.filelist.lock",
		FileList:     fileListsDir + "/" + fileListPrefx + name,
	}, nil
}

// LargeIndex returns the key of the large-index table of a storage column.
func (p Paths) LargeIndex(column string) string { return p.LargeIndexes + "/" + column }

var nonAlnum = regexp.MustCompile(`[^A-Za-z0-9]+`)

// CleanFileName replaces every run of non-alphanumeric characters with one
// '_' and trims leading and trailing '_' (§2.8; a utility, not used by the
// layout).
func CleanFileName(s string) string {
	return strings.Trim(nonAlnum.ReplaceAllString(s, "_"), "_")
}
