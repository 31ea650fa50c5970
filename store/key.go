package store

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest key ValidKey accepts, in bytes: S3's limit
// (1024 bytes of UTF-8), which is also below GCS's (1024) and Azure's (1024
// characters), so a key valid here is valid on every backend.
const MaxKeyLen = 1024

// KeyError reports a key that ValidKey rejects. It matches ErrInvalidKey
// with errors.Is.
type KeyError struct {
	Key    string // the rejected key
	Reason string // why, e.g. `".." segment`
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("store: invalid key %q: %s", e.Key, e.Reason)
}

// Unwrap returns ErrInvalidKey.
func (e *KeyError) Unwrap() error { return ErrInvalidKey }

// ValidKey returns nil if key is a valid object key: non-empty, at most
// MaxKeyLen bytes of valid UTF-8, relative (no leading "/"), made of
// non-empty "/"-separated segments none of which is "." or "..", and free of
// NUL and backslash (which some systems read as a separator). Otherwise it
// returns a *KeyError. A valid key names a path strictly inside a Store's
// root on every backend, including local folders.
func ValidKey(key string) error {
	if reason := keyProblem(key, false); reason != "" {
		return &KeyError{Key: key, Reason: reason}
	}
	return nil
}

// validPrefix is ValidKey for a List prefix: empty is allowed and so is a
// trailing "/" (a prefix names a folder or the start of a key).
func validPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if reason := keyProblem(prefix, true); reason != "" {
		return &KeyError{Key: prefix, Reason: reason}
	}
	return nil
}

func keyProblem(key string, prefix bool) string {
	switch {
	case key == "":
		return "empty"
	case len(key) > MaxKeyLen:
		return fmt.Sprintf("longer than %d bytes", MaxKeyLen)
	case !utf8.ValidString(key):
		return "not valid UTF-8"
	case strings.HasPrefix(key, "/"):
		return "absolute"
	case strings.ContainsRune(key, 0):
		return "contains NUL"
	case strings.ContainsRune(key, '\\'):
		return "contains a backslash"
	}
	if prefix {
		key = strings.TrimSuffix(key, "/")
	}
	// Segment by segment without strings.Split: every ranged read of the
	// file store validates its key.
	for rest := key; ; {
		s, after, more := strings.Cut(rest, "/")
		switch s {
		case "":
			return "empty segment"
		case ".", "..":
			return fmt.Sprintf("%q segment", s)
		}
		if !more {
			return ""
		}
		rest = after
	}
}

// JoinKey joins key parts with "/", dropping empty parts and the slashes at
// either end of each part. It does not clean "." or ".." segments (that
// would hide a hostile part); pass the result to ValidKey, as every Store
// method does.
func JoinKey(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		p = strings.Trim(p, "/")
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(p)
	}
	return b.String()
}
