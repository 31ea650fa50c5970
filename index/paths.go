package index

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

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

// MaxNameBytes is the longest index name ValidateNewName accepts: the
// FileList's folder, "[ariadne_index] <name>", must stay within the
// 255-byte file name limit of local file systems, with room to spare.
const MaxNameBytes = 200

// NameRule states the rule of ValidateNewName, for messages and help.
const NameRule = "index names are 1 to 200 bytes of UTF-8 without control characters, '/', '\\' or NUL, not starting with '.'"

// ValidateNewName applies ValidateName and, for a name being created or
// written, the rules that keep it usable everywhere: valid UTF-8, no
// control characters (they break listings and terminals) and at most
// MaxNameBytes bytes (a longer one fails as a file name on local disk,
// where it used to surface as "metadata is missing or corrupt").
// Violations are ErrInvalidArgument naming the rule.
func ValidateNewName(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	bad := ""
	switch {
	case !utf8.ValidString(name):
		bad = "is not valid UTF-8"
	case len(name) > MaxNameBytes:
		bad = fmt.Sprintf("is %d bytes long", len(name))
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		bad = "contains a control character"
	}
	if bad != "" {
		shown := name
		if len(shown) > 64 {
			shown = shown[:64] + "…"
		}
		return aerr.Invalid("Index name %s %s: %s", strconv.Quote(shown), bad, NameRule)
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
