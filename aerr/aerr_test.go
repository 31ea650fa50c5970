package aerr

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		err  error
		is   []*Kind
		isnt []*Kind
	}{
		{UnsupportedMetadataVersion(11, 10), []*Kind{ErrUnsupportedMetadataVersion, ErrStorageMigration, ErrAriadne}, []*Kind{ErrUnsupportedStorageFormatVersion}},
		{UnsupportedStorageFormatVersion(4, 3), []*Kind{ErrUnsupportedStorageFormatVersion, ErrStorageMigration, ErrAriadne}, []*Kind{ErrUnsupportedMetadataVersion}},
		{Invalid("bad %s", "x"), []*Kind{ErrInvalidArgument}, []*Kind{ErrAriadne}},
		{fmt.Errorf("outer: %w", IndexNotFound("x")), []*Kind{ErrIndexNotFound, ErrAriadne}, []*Kind{ErrStorageMigration}},
	} {
		for _, k := range tc.is {
			if !errors.Is(tc.err, k) {
				t.Errorf("%v: want Is(%v)", tc.err, k)
			}
		}
		for _, k := range tc.isnt {
			if errors.Is(tc.err, k) {
				t.Errorf("%v: want !Is(%v)", tc.err, k)
			}
		}
	}
}

func TestMessagesAndCause(t *testing.T) {
	err := MetadataMissingOrCorrupt(io.ErrUnexpectedEOF)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal("cause lost")
	}
	if got, want := FormatMismatch("i", "csv", "parquet").Error(), "Format mismatch for index 'i': stored format is 'csv' but 'parquet' was provided"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	if KindOf(err) != ErrMetadataMissingOrCorrupt || KindOf(io.EOF) != nil {
		t.Fatal("KindOf")
	}
}
