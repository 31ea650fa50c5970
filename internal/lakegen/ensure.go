package lakegen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ariadne-go/ariadne/store"
)

// Ensure returns the lake in the local folder dir, generating it first
// unless dir already holds one made from the same config and generator
// Version (recorded in dir/lake.json). Benchmarks use it to pay the
// generation once across runs. progress, if not nil, is told when a lake is
// generated.
func Ensure(ctx context.Context, dir string, c Config, progress io.Writer) ([]File, error) {
	type record struct {
		Version int
		Config  Config
		Files   []File
	}
	r, err := Reuse(dir, "lake.json", func(r record) bool {
		return r.Version == Version && fmt.Sprint(r.Config) == fmt.Sprint(c)
	}, func() (record, error) {
		st, err := store.Open(ctx, "file://"+dir)
		if err != nil {
			return record{}, err
		}
		defer st.Close()
		if progress != nil {
			fmt.Fprintf(progress, "generating the lake (%d MB)...\n", c.withDefaults().TargetBytes/1e6)
		}
		files, err := Generate(ctx, st, c)
		return record{Version, c, files}, err
	})
	return r.Files, err
}

// Reuse returns the record R in the marker file dir/name if it decodes and
// same accepts it: the folder already holds what build would write.
// Otherwise it empties dir, runs build to fill it, and writes build's
// record as the marker (JSON) last, so a folder whose build failed half-way
// is never reused.
func Reuse[R any](dir, name string, same func(R) bool, build func() (R, error)) (R, error) {
	marker := filepath.Join(dir, name)
	if b, err := os.ReadFile(marker); err == nil {
		var r R
		if json.Unmarshal(b, &r) == nil && same(r) {
			return r, nil
		}
	}
	var zero R
	if err := os.RemoveAll(dir); err != nil {
		return zero, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return zero, err
	}
	r, err := build()
	if err != nil {
		return zero, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return zero, err
	}
	return r, os.WriteFile(marker, b, 0o644)
}
