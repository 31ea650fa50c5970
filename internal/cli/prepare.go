package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne/fileindex"
	"github.com/ariadne-go/ariadne/prepared"
	"github.com/ariadne-go/ariadne/rowindex"
	"github.com/ariadne-go/ariadne/store"
)

func newPrepareCmd(g *globals) *cobra.Command {
	var out, key, codec, memory string
	var sortCols, encodings []string
	var opts prepared.Options
	var memoryMB int64
	var overwrite, frames, blobKeep, coGroup bool
	var blob, blobCodec string
	var fo prepared.FrameOptions
	cmd := &cobra.Command{
		Use:   "prepare SRC... --out DEST --key COL [--sort COL,...] [--buckets N] [--page-bytes N] [--row-group-rows N] [--codec C] [--encoding COL=ENC] [--frames [--frame-min-bytes N] [--frame-align N] [--interleave COL,...]] [--blob NAME=COL,... [--blob-keep | --blob-codec zstd-dict]] [--co-group] [--memory SIZE]",
		Short: "Rewrite Parquet files as prepared Parquet: sorted by key, bucketed, with key-aligned pages",
		Long: `prepare reads the Parquet files SRC (files or folders, local paths or URIs; a folder's
partition folders such as date=2024-06-01/ are kept) and writes them under DEST as prepared Parquet:
per partition one file per hash bucket of the key (Spark's bucketBy: part-NNNNN.parquet), each sorted
by (key, sort columns), with data pages that never split a key, a page index, a bloom filter on the
key and an ariadne.prepared marker. Every engine reads the files as ordinary Parquet; the row index
reads one small page per column for a key.

A first pass over the sources (footers, key column, a sample of rows) chooses what the flags leave
unset: page size, buckets (files of about 128 MiB), row group size, codec (ZSTD) and the encoding of
each column (a dictionary only where it is small). Every choice is printed and recorded in the files'
marker. Rows are sorted externally: past half of --memory, sorted runs are spilled to --temp-dir and
merged.

--frames writes every column PLAIN with each page's values compressed as ZSTD frames of whole keys
(at least --frame-min-bytes of values each) and a frame table, so a row index lookup reads and
decompresses only the frames holding its key; still standard Parquet (ZSTD pages) for every engine.
--interleave COL,... (with --frames) also copies these columns' values of each key into a ZSTD
skippable frame right after the key's frame in the key column, so a lookup of the key and these
columns reads one byte range per file; other engines skip the copies, which store the columns twice.

--blob NAME=COL,... stores the listed columns (and the key) of every row as one binary column NAME
(a typed row encoding described in the files' ariadne.blob metadata), so a row index lookup reads one
range per file and returns the original columns with their types. The listed columns are replaced by
the blob unless --blob-keep. --blob-codec zstd-dict co-groups instead: one stored row per key, its
rows column by column in one ZSTD frame compressed with a dictionary trained per file (stored in the
footer's metadata); the blob must list every column but the key, and the files are framed, so a
lookup reads exactly its key's frame in one range per file.

--co-group writes one row per key and file (per ≈64 KiB of values for a heavy key): the key, and every
other column as a LIST of the key's values in row order, standard nested Parquet that engines compute on
(UNNEST, explode) and the row index expands back to the source's rows. Not with --frames or --blob.
See docs/prepared.md.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if out == "" || key == "" {
				return usagef("prepare: --out DEST and --key COL are required")
			}
			opts.Key, opts.Sort, opts.Overwrite = key, sortCols, overwrite
			mem, err := parseSize(memory)
			if err != nil {
				return usagef("prepare: --memory %q: %v", memory, err)
			}
			if cmd.Flags().Changed("memory-mb") {
				mem = memoryMB << 20
			}
			heap, restore := prepareMemory(mem)
			defer restore()
			opts.MemoryBytes = heap
			if frames {
				if codec != "" && !strings.EqualFold(codec, "zstd") {
					return usagef("prepare: --frames compresses with ZSTD frames; --codec %s cannot be framed", codec)
				}
				opts.Frames = &fo
			} else if cmd.Flags().Changed("frame-min-bytes") || cmd.Flags().Changed("frame-align") || cmd.Flags().Changed("frame-raw-blocks") || cmd.Flags().Changed("interleave") {
				return usagef("prepare: --frame-min-bytes, --frame-align, --frame-raw-blocks and --interleave need --frames")
			}
			if blob != "" {
				name, list, ok := strings.Cut(blob, "=")
				if !ok || name == "" || list == "" {
					return usagef("prepare: --blob %q: want NAME=COL,COL,...", blob)
				}
				opts.Blob = &prepared.BlobOptions{Column: name, Fields: strings.Split(list, ","), Keep: blobKeep, Codec: blobCodec}
				if blobCodec == "row" {
					opts.Blob.Codec = ""
				}
			} else if blobKeep || blobCodec != "" {
				return usagef("prepare: --blob-keep and --blob-codec need --blob")
			}
			if coGroup && (frames || blob != "") {
				return usagef("prepare: --co-group is not combined with --frames or --blob")
			}
			opts.CoGroup = coGroup
			if codec != "" {
				if opts.Compression, err = codecByName(codec); err != nil {
					return err
				}
			}
			if opts.Encodings, err = encodingsByName(encodings); err != nil {
				return err
			}
			dstURL, err := folderURL(out)
			if err != nil {
				return err
			}
			if isMemURL(dstURL) {
				return usagef("prepare: --out %s: a mem:// folder is gone when the command exits; write to a folder or an object store", out)
			}
			dst, err := store.Open(ctx, dstURL)
			if err != nil {
				return err
			}
			defer dst.Close()
			res := store.NewResolver(store.ResolverOptions{})
			defer res.Close()
			srcs, err := prepared.Sources(ctx, res, args)
			if err != nil {
				return err
			}
			pp := g.progress()
			opts.Progress = func(p prepared.Progress) {
				if p.Phase == "notice" {
					g.notice("prepare", p.Message)
					return
				}
				pp.report(fileindex.Progress{Phase: p.Phase, Done: p.Done, Total: p.Total, Bytes: p.Bytes})
			}
			st, err := prepared.PrepareFiles(ctx, res, srcs, dst, opts)
			if err != nil {
				return err
			}
			return g.emit(prepareJSON(dst.URL(), st), func(w io.Writer) {
				fmt.Fprintf(w, "prepared %d source file(s) (%.1f MB) into %d file(s) (%.1f MB, %.2f× the sources) under %s\n",
					st.Sources, float64(st.SourceBytes)/1e6, len(st.Files), float64(st.Bytes)/1e6, ratio(st.Bytes, st.SourceBytes), dst.URL())
				fmt.Fprintf(w, "%d rows, %d keys, %d data pages (%.2f per key and column, at most %d), page index %.1f KB\n",
					st.Rows, st.Keys, st.Pages, st.PagesPerKey(), st.MaxPagesPerKey, float64(st.PageIndexBytes)/1e3)
				if st.Frames > 0 {
					fmt.Fprintf(w, "framed: %d ZSTD frames, %.1f KB of alignment padding\n", st.Frames, float64(st.FramePaddingBytes)/1e3)
				}
				if st.CopyBytes > 0 {
					fmt.Fprintf(w, "interleaved: %.1f KB of copies next to the key's frames\n", float64(st.CopyBytes)/1e3)
				}
				if st.Runs > 0 {
					fmt.Fprintf(w, "sorted externally: %d runs, %.1f MB spilled\n", st.Runs, float64(st.SpillBytes)/1e6)
				}
				printChoices(w, st.Choices)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "output folder (local path or URI: file://, s3://, gs://, azblob://, mem://)")
	f.StringVar(&key, "key", "", "key column (top-level primitive)")
	f.StringSliceVar(&sortCols, "sort", nil, "further sort columns within a key (comma-separated)")
	f.IntVar(&opts.Buckets, "buckets", 0, "hash buckets per partition (Spark's bucketBy: pmod(murmur3(key), N)); 0: chosen for files of about 128 MiB")
	f.IntVar(&opts.PageBytes, "page-bytes", 0, "target page size in uncompressed bytes, whole keys packed up to it; 0: chosen from the data; -1: one page per key")
	f.Int64Var(&opts.RowGroupRows, "row-group-rows", 0, "rows per row group (cut at key boundaries); 0: chosen for about 128 MiB uncompressed")
	f.StringVar(&codec, "codec", "", "page codec: zstd (default), snappy, gzip, brotli, uncompressed")
	f.StringSliceVar(&encodings, "encoding", nil, "COL=ENC: encoding of a column (plain, dictionary, delta-length-byte-array, delta-byte-array, delta-binary-packed, byte-stream-split); others chosen from the data")
	f.StringVar(&memory, "memory", "1GiB", "memory budget of the process (e.g. 512MiB, 2GiB): rows past half of it are sorted in runs spilled to --temp-dir; also the Go memory limit unless GOMEMLIMIT is set")
	f.Int64Var(&memoryMB, "memory-mb", 0, "memory budget in MiB (use --memory)")
	_ = f.MarkHidden("memory-mb")
	f.StringVar(&opts.TempDir, "temp-dir", "", "local folder for sorted runs (default: the system's temporary folder); removed at the end")
	f.IntVar(&opts.Parallelism, "parallel", 0, "sources read, runs sorted and bucket files written at once (default: the number of CPUs)")
	f.BoolVar(&frames, "frames", false, "write ZSTD frames of whole keys inside PLAIN pages, with a frame table the row index reads (a lookup decompresses only its key's frames)")
	f.IntVar(&fo.MinFrameBytes, "frame-min-bytes", prepared.DefaultMinFrameBytes, "with --frames: whole keys are grouped into a frame of at least N bytes of PLAIN values; 0: a frame per key (larger files)")
	f.IntVar(&fo.Align, "frame-align", 0, "with --frames: align frames to N bytes (a power of two ≥ 64) with ZSTD skippable frames; 0: no padding")
	f.BoolVar(&fo.RawBlocks, "frame-raw-blocks", false, "with --frames: store a frame that ZSTD cannot shrink as a raw (uncompressed) ZSTD block, read by byte range; not with --frame-align")
	f.StringSliceVar(&fo.Interleave, "interleave", nil, "with --frames: columns (comma-separated, not the key) whose values of each key are copied next to the key's frame, so a lookup reads one range per file for the key and them (stored twice); not with --frame-raw-blocks or --blob")
	f.StringVar(&blob, "blob", "", "NAME=COL,...: store these columns and the key of every row as one binary column NAME, so a row index lookup reads one range per file")
	f.BoolVar(&coGroup, "co-group", false, "one row per key and file, every other column a LIST of the key's values in row order (nested co-grouping)")
	f.BoolVar(&blobKeep, "blob-keep", false, "with --blob: keep the blob's columns as columns too (stored twice)")
	f.StringVar(&blobCodec, "blob-codec", "", "with --blob: row (a blob per row, the default) or zstd-dict (a blob per key: the key's rows column by column, one ZSTD frame each with a dictionary trained per file; the blob lists every column but the key; framed)")
	f.BoolVar(&overwrite, "overwrite", false, "replace existing output files (default: refuse)")
	return cmd
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// codecByName returns the codec named by --codec.
func codecByName(name string) (compress.Codec, error) {
	switch strings.ToLower(name) {
	case "zstd":
		return &parquet.Zstd, nil
	case "snappy":
		return &parquet.Snappy, nil
	case "gzip":
		return &parquet.Gzip, nil
	case "brotli":
		return &parquet.Brotli, nil
	case "uncompressed", "none":
		return &parquet.Uncompressed, nil
	}
	return nil, usagef("prepare: unknown codec %q (zstd, snappy, gzip, brotli, uncompressed; not LZ4_RAW, which parquet-go v0.32.0 does not read back)", name)
}

// encodingsByName parses --encoding COL=ENC flags.
func encodingsByName(specs []string) (map[string]encoding.Encoding, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := map[string]encoding.Encoding{}
	for _, spec := range specs {
		col, name, ok := strings.Cut(spec, "=")
		if !ok || col == "" {
			return nil, usagef("prepare: --encoding %q: want COL=ENC", spec)
		}
		var e encoding.Encoding
		switch strings.ToLower(strings.ReplaceAll(name, "_", "-")) {
		case "plain":
			e = &parquet.Plain
		case "dictionary", "dict", "rle-dictionary":
			e = &parquet.RLEDictionary
		case "delta-length-byte-array":
			e = &parquet.DeltaLengthByteArray
		case "delta-byte-array":
			e = &parquet.DeltaByteArray
		case "delta-binary-packed":
			e = &parquet.DeltaBinaryPacked
		case "byte-stream-split":
			e = &parquet.ByteStreamSplit
		default:
			return nil, usagef("prepare: --encoding %q: unknown encoding %q", spec, name)
		}
		out[col] = e
	}
	return out, nil
}

// printChoices prints the layout settings and why each was chosen.
func printChoices(w io.Writer, ch *prepared.Choices) {
	if ch == nil {
		return
	}
	chosen := func(name string) string {
		if why, ok := ch.Why[name]; ok {
			return "chosen: " + why
		}
		return "set"
	}
	pages := fmt.Sprint(ch.PageBytes)
	if ch.PageBytes == prepared.PageBytesPerKey {
		pages = "one page per key"
	}
	fmt.Fprintf(w, "page bytes      %s (%s)\n", pages, chosen("page_bytes"))
	fmt.Fprintf(w, "buckets         %d (%s)\n", ch.Buckets, chosen("buckets"))
	fmt.Fprintf(w, "row group rows  %d (%s)\n", ch.RowGroupRows, chosen("row_group_rows"))
	fmt.Fprintf(w, "codec           %s (%s)\n", ch.Codec, chosen("codec"))
	if fr := ch.Frames; fr != nil {
		fmt.Fprintf(w, "frames          ZSTD frames of whole keys, ≥ %d B of values each, align %d, raw blocks %t (set)\n", fr.MinFrameBytes, fr.Align, fr.RawBlocks)
		if len(fr.Interleave) > 0 {
			fmt.Fprintf(w, "interleave      %s copied next to each key's frame (set)\n", strings.Join(fr.Interleave, ","))
		}
	} else {
		fmt.Fprintf(w, "frames          none (--frames to frame keys)\n")
	}
	if b := ch.Blob; b != nil {
		codec := "row"
		if b.Codec != "" {
			codec = b.Codec
		}
		fmt.Fprintf(w, "blob            %s = key + %s, columns kept %t, codec %s (set)\n", b.Column, strings.Join(b.Fields, ","), b.Keep, codec)
	}
	if cg := ch.CoGroup; cg != nil {
		fmt.Fprintf(w, "co-group        one row per key and file, every other column a LIST (≤ %d B of values a row) (set)\n", cg.BlockBytes)
	}
	fmt.Fprintf(w, "encodings       (%s)\n", chosen("encodings"))
	for _, c := range ch.Columns {
		how := fmt.Sprintf("%d of %d sampled values distinct, %d bytes", c.Distinct, c.Sampled, c.DictBytes)
		if c.Set {
			how = "set"
		}
		fmt.Fprintf(w, "  %-20s %-24s %s\n", c.Column, c.Encoding, how)
	}
	b := ch.Basis
	fmt.Fprintf(w, "measured: %d rows in %d sources (%d partitions), ≈%d keys (%.1f rows per key), %.1f bytes per row, widest column %s (%.2f× compressed)\n",
		b.Rows, b.Sources, b.Partitions, b.KeyGroups, b.RowsPerKey, b.RowBytes, b.WidestColumn, b.WidestRatio)
}

// folderURL turns a local path into a file:// URL; URLs are kept.
func folderURL(s string) (string, error) {
	if strings.Contains(s, "://") {
		return s, nil
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		return "", err
	}
	return "file://" + filepath.ToSlash(abs), nil
}

// prepareJSON renders the stats for --json.
func prepareJSON(dest string, st prepared.Stats) map[string]any {
	files := make([]map[string]any, 0, len(st.Files))
	for _, f := range st.Files {
		files = append(files, map[string]any{
			"key": f.Key, "bucket": f.Bucket, "rows": f.Rows, "bytes": f.Bytes, "row_groups": f.RowGroups,
			"keys": f.Keys, "pages": f.Pages, "pages_per_column": f.PagesPerColumn,
			"max_pages_per_key": f.MaxPagesPerKey, "page_index_bytes": f.PageIndexBytes, "frames": f.Frames,
		})
	}
	return map[string]any{
		"out": dest, "sources": st.Sources, "source_bytes": st.SourceBytes, "rows": st.Rows, "bytes": st.Bytes,
		"keys": st.Keys, "pages": st.Pages, "pages_per_key": st.PagesPerKey(), "max_pages_per_key": st.MaxPagesPerKey,
		"page_index_bytes": st.PageIndexBytes, "runs": st.Runs, "spill_bytes": st.SpillBytes,
		"frames": st.Frames, "frame_padding_bytes": st.FramePaddingBytes, "interleaved_copy_bytes": st.CopyBytes,
		"choices": choicesJSON(st.Choices), "files": files, "manifest": prepared.ManifestKey, "notice": st.Notice,
	}
}

// choicesJSON renders the choices with snake_case keys.
func choicesJSON(ch *prepared.Choices) map[string]any {
	if ch == nil {
		return nil
	}
	cols := make([]map[string]any, 0, len(ch.Columns))
	for _, c := range ch.Columns {
		cols = append(cols, map[string]any{"column": c.Column, "encoding": c.Encoding, "set": c.Set,
			"sampled": c.Sampled, "distinct": c.Distinct, "dict_bytes": c.DictBytes})
	}
	var frames map[string]any
	if fr := ch.Frames; fr != nil {
		frames = map[string]any{"min_frame_bytes": fr.MinFrameBytes, "align": fr.Align, "raw_blocks": fr.RawBlocks,
			"interleave": append([]string{}, fr.Interleave...)}
	}
	var blob map[string]any
	if bl := ch.Blob; bl != nil {
		codec := "row"
		if bl.Codec != "" {
			codec = bl.Codec
		}
		blob = map[string]any{"column": bl.Column, "fields": bl.Fields, "keep": bl.Keep, "codec": codec}
	}
	var coGroup map[string]any
	if cg := ch.CoGroup; cg != nil {
		coGroup = map[string]any{"layout": cg.Layout, "block_bytes": cg.BlockBytes}
	}
	b := ch.Basis
	return map[string]any{
		"frames":     frames,
		"blob":       blob,
		"co_group":   coGroup,
		"page_bytes": ch.PageBytes, "buckets": ch.Buckets, "row_group_rows": ch.RowGroupRows, "codec": ch.Codec,
		"columns": cols, "chosen": ch.Chosen, "why": ch.Why,
		"basis": map[string]any{
			"sources": b.Sources, "source_bytes": b.SourceBytes, "rows": b.Rows, "partitions": b.Partitions,
			"max_partition_bytes": b.MaxPartitionBytes, "max_partition_sources": b.MaxPartitionSources,
			"key_groups": b.KeyGroups, "rows_per_key": b.RowsPerKey, "row_bytes": b.RowBytes,
			"widest_column": b.WidestColumn, "widest_ratio": b.WidestRatio,
		},
	}
}

// prepareMemory returns the part of prepare's process budget that is the
// Go heap's (Options.MemoryBytes: the held rows take half of it), and sets
// the Go memory limit to it unless GOMEMLIMIT is set; restore puts the
// previous limit back (tests run commands in one process).
//
// The budget is the process's resident memory: the binary's own resident
// pages (code and static data, DuckDB's library included: ≈88 MB of the
// ariadne binary, resident from the start), which the Go limit does not
// count, are taken off first, as add-row-index does (rowindex.HeapBudget).
// Without that the flat 1 GB folder's prepare peaked at 1,067.6 MiB under
// --memory 1GiB, its Go memory within the limit. Without a limit the
// collector would let garbage (decoded pages, merged rows) grow the heap
// to twice what is live. The limit is never below 64 MiB, where the
// collector would run all the time for the runtime's own memory.
func prepareMemory(budget int64) (heap int64, restore func()) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		return budget, func() {}
	}
	heap = rowindex.HeapBudget(budget)
	prev := debug.SetMemoryLimit(max(heap, 64<<20))
	return heap, func() { debug.SetMemoryLimit(prev) }
}
