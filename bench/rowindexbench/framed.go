package rowindexbench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/ariadne-go/ariadne/internal/lakegen"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/store"
)

// framedVersion changes when ensureFramed would write other files from the
// same source and options.
const framedVersion = 1

// framedPageBytes is the framed layout's page target: LayoutPrepared's, so
// that the two prepared layouts differ only by the framing.
func framedPageBytes(c lakegen.Config) int {
	return cmp.Or(c.PreparedPageBytes, lakegen.DefaultPreparedPageBytes)
}

// framedOptions are the options of `ariadne prepare SRC --out DEST --key
// user_id --sort ts --frames --frame-raw-blocks --frame-min-bytes M
// --buckets B --page-bytes P --row-group-rows R`, with B, P and R those of
// LayoutPrepared and M minFrame (0: a frame per key).
func framedOptions(c lakegen.Config, minFrame int) prepared.Options {
	return prepared.Options{
		Key: keyColumn, Sort: []string{"ts"}, Buckets: c.FilesPerDay, PageBytes: framedPageBytes(c),
		RowGroupRows: c.RowGroupRows,
		Frames:       &prepared.FrameOptions{MinFrameBytes: minFrame, RawBlocks: true},
	}
}

// ensureFramed prepares the source lake srcDir (generated with c) into
// lakeDir with framedOptions(c, minFrame), unless lakeDir already holds
// that output (its framed.json records the source's config and the
// options). It returns the prepared files' keys in lakeDir.
func ensureFramed(ctx context.Context, srcDir, lakeDir string, c lakegen.Config, minFrame int, progress io.Writer) ([]string, error) {
	type record struct {
		Version int
		Source  string // fmt.Sprint of the source lake's config
		Options string // fmt.Sprint of the options that matter
		Files   []string
	}
	opts := framedOptions(c, minFrame)
	want := record{Version: framedVersion, Source: fmt.Sprint(c),
		Options: fmt.Sprint(opts.Key, opts.Sort, opts.Buckets, opts.PageBytes, opts.RowGroupRows, *opts.Frames)}
	r, err := lakegen.Reuse(lakeDir, "framed.json", func(r record) bool {
		return r.Version == want.Version && r.Source == want.Source && r.Options == want.Options
	}, func() (record, error) {
		dst, err := store.Open(ctx, "file://"+lakeDir)
		if err != nil {
			return record{}, err
		}
		defer dst.Close()
		res := store.NewResolver(store.ResolverOptions{})
		defer res.Close()
		srcs, err := prepared.Sources(ctx, res, []string{"file://" + srcDir})
		if err != nil {
			return record{}, err
		}
		fmt.Fprintf(progress, "preparing %d source files with frames (prepare --frames --frame-raw-blocks --frame-min-bytes %d)...\n", len(srcs), minFrame)
		st, err := prepared.PrepareFiles(ctx, res, srcs, dst, opts)
		if err != nil {
			return record{}, err
		}
		for _, f := range st.Files {
			want.Files = append(want.Files, f.Key)
		}
		slices.Sort(want.Files)
		fmt.Fprintf(progress, "prepared %d files, %.1f MB (%.2f× the sources), %d frames\n",
			len(st.Files), float64(st.Bytes)/1e6, float64(st.Bytes)/float64(max(st.SourceBytes, 1)), st.Frames)
		return want, nil
	})
	return r.Files, err
}
