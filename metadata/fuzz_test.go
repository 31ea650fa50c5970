package metadata

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: metadata.json of any content never panics; what parses renders
// and parses again. Seeds: every historical version (testdata/ariadne) and
// testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob("../testdata/ariadne/index_metadata/*.json")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"schema": 3, "indexes": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil || m == nil {
			return
		}
		_ = m.Clone()
	})
}
