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
	marker := filepath.Join(dir, "lake.json")
	if b, err := os.ReadFile(marker); err == nil {
		var r record
		if json.Unmarshal(b, &r) == nil && r.Version == Version && fmt.Sprint(r.Config) == fmt.Sprint(c) {
			return r.Files, nil
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if progress != nil {
		fmt.Fprintf(progress, "generating the lake (%d MB)...\n", c.withDefaults().TargetBytes/1e6)
	}
	files, err := Generate(ctx, st, c)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(record{Version, c, files})
	if err != nil {
		return nil, err
	}
	return files, os.WriteFile(marker, b, 0o644)
}
