package index

import (
	"errors"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
)

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"orders", "my_index", "customer-data", "v2.final", "A1B2", "a..b"} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("ValidateName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"../escape", "a/b", `a\b`, ".hidden", "..", "a\x00b", "", " ", "\t"} {
		if err := ValidateName(bad); !errors.Is(err, aerr.ErrInvalidArgument) {
			t.Errorf("ValidateName(%q) = %v, want ErrInvalidArgument", bad, err)
		}
	}
}

func TestPaths(t *testing.T) {
	p, err := PathsFor("orders")
	if err != nil {
		t.Fatal(err)
	}
	if p.FileList != "filelists/[ariadne_index] orders" || p.Metadata != "indexes/orders/metadata.json" || p.LargeIndex("Id") != "indexes/orders/large_indexes/Id" {
		t.Fatalf("%+v", p)
	}
	if n, _ := FileListName("orders"); n != "[ariadne_index] orders" {
		t.Fatal(n)
	}
}

func TestCleanFileName(t *testing.T) {
	for in, want := range map[string]string{
		"file.txt": "file_txt", "file-name_123.csv": "file_name_123_csv", "file@#$%^&*()name": "file_name",
		"___file___": "file", "___": "", "@#$": "", "a.b": "a_b", "": "",
	} {
		if got := CleanFileName(in); got != want {
			t.Errorf("CleanFileName(%q) = %q, want %q", in, got, want)
		}
	}
}
