package rowindex

import (
	"errors"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
)

// TestValidateName: hostile row index names are refused (ErrBadQuery and
// aerr.ErrInvalidArgument, the rule in the message).
func TestValidateName(t *testing.T) {
	for _, ok := range []string{"user_id", "by user", "ü"} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", ".x", "a/b", `a\b`, "a\x00", "a\nb", "a\tb", strings.Repeat("k", 201), "\xfe"} {
		err := ValidateName(bad)
		if !errors.Is(err, ErrBadQuery) || !errors.Is(err, aerr.ErrInvalidArgument) || !strings.Contains(err.Error(), NameRule) {
			t.Errorf("%q: %v", bad, err)
		}
		d := Definition{Name: bad, Key: "k"}
		if err := d.Validate(); !errors.Is(err, aerr.ErrInvalidArgument) {
			t.Errorf("Validate %q: %v", bad, err)
		}
	}
}
