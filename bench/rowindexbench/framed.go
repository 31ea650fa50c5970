package rowindexbench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

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

// blobColumn and blobFields are LayoutCoGrouped's blob: every generated
// column but the key (the zstd-dict codec wants them all).
const blobColumn = "served"

var blobFields = []string{"ts", "track_uri", "duration_ms", "context"}

// framedOptions are the options of `ariadne prepare SRC --out DEST --key
// user_id --sort ts --frames --frame-raw-blocks --frame-min-bytes M
// --buckets B --page-bytes P --row-group-rows R`, with B, P and R those of
// LayoutPrepared and M minFrame (0: a frame per key). With cogrouped they
// are those of LayoutCoGrouped: `--blob served=ts,track_uri,duration_ms,context
// --blob-codec zstd-dict` instead of --frame-raw-blocks (prepare's command
// in docs/prepared.md; the key column is not framed, and the blob's
// blocks are frames of their own).
func framedOptions(c lakegen.Config, minFrame int, cogrouped bool) prepared.Options {
	o := prepared.Options{
		Key: keyColumn, Sort: []string{"ts"}, Buckets: c.FilesPerDay, PageBytes: framedPageBytes(c),
		RowGroupRows: c.RowGroupRows,
		Frames:       &prepared.FrameOptions{MinFrameBytes: minFrame, RawBlocks: !cogrouped},
	}
	if cogrouped {
		o.Blob = &prepared.BlobOptions{Column: blobColumn, Fields: blobFields, Codec: prepared.BlobCodecZstdDict}
	}
	return o
}

// ensureFramed prepares the source lake srcDir (generated with c) into
// lakeDir with framedOptions(c, minFrame, cogrouped), unless lakeDir
// already holds that output (its framed.json records the source's config
// and the options). It returns the prepared files' keys in lakeDir.
func ensureFramed(ctx context.Context, srcDir, lakeDir string, c lakegen.Config, minFrame int, cogrouped bool, progress io.Writer) ([]string, error) {
	type record struct {
		Version int
		Source  string // fmt.Sprint of the source lake's config
		Options string // fmt.Sprint of the options that matter
		Files   []string
	}
	opts := framedOptions(c, minFrame, cogrouped)
	want := record{Version: framedVersion, Source: fmt.Sprint(c),
		Options: fmt.Sprint(opts.Key, opts.Sort, opts.Buckets, opts.PageBytes, opts.RowGroupRows, *opts.Frames)}
	how := fmt.Sprintf("with frames (prepare --frames --frame-raw-blocks --frame-min-bytes %d)", minFrame)
	if opts.Blob != nil {
		want.Options += fmt.Sprint(" ", *opts.Blob)
		how = fmt.Sprintf("co-grouped (prepare --frames --frame-min-bytes %d --blob %s=%s --blob-codec %s)",
			minFrame, opts.Blob.Column, strings.Join(opts.Blob.Fields, ","), opts.Blob.Codec)
	}
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
		fmt.Fprintf(progress, "preparing %d source files %s...\n", len(srcs), how)
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
