package index

import (
	"errors"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
)

// TestValidateNewName: hostile names are refused up front with the rule in
// the message; ordinary ones (spaces, non-ASCII letters) pass.
func TestValidateNewName(t *testing.T) {
	for _, ok := range []string{"plays", "my index", "índice_ü", strings.Repeat("a", MaxNameBytes)} {
		if err := ValidateNewName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", " ", "a/b", `a\b`, "..", ".hidden", "a\x00b", "line\nbreak", "tab\there", "bell\a",
		"del\x7f", strings.Repeat("a", MaxNameBytes+1), "bad\xffutf8"} {
		err := ValidateNewName(bad)
		if !errors.Is(err, aerr.ErrInvalidArgument) {
			t.Errorf("%q: %v, want invalid argument", bad, err)
			continue
		}
		if strings.ContainsAny(bad, "\n\t\a\x7f") || len(bad) > MaxNameBytes || strings.Contains(bad, "\xff") {
			if !strings.Contains(err.Error(), NameRule) {
				t.Errorf("%q: the message does not state the rule: %v", bad, err)
			}
			if strings.ContainsAny(err.Error(), "\n\t\a") {
				t.Errorf("%q: the message prints a raw control character: %q", bad, err.Error())
			}
		}
	}
}
