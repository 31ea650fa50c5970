package fileindex

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/ariadne-go/ariadne/internal/duck"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/metadata"
	"github.com/ariadne-go/ariadne/schema"
)

// The join's planner between PathLate and PathScan. Late materialization
// pays per matching row (Go decodes and converts the row, DuckDB's
// appender loads it), the engine's own Parquet reader per file (native,
// multi-threaded decoding, with the keys pushed into its scan as a join
// filter). When a large share of the located files' rows match — many keys,
// or a hot key — the engine's scan of the located files is the cheaper of
// the two, and never more than the full scan a user would run without the
// index. The planner samples the key column of a few located files (the
// late path's first step, so the cost of a wrong guess is small) and lets
// the engine read the located files itself when more than
// scanMatchFraction of the sampled rows match and the files are ones the
// engine reads exactly as our reader does: local Parquet files, no read
// options, and every stored column of the same type in the engine's view
// (a timestamp with time zone is read as its UTC instant). Otherwise it
// keeps the late path. The choice and its reason are JoinStats.Plan.

// PathScan: the engine reads the located files itself (see join_scan.go).
const PathScan JoinPath = "scan"

// scanMatchFraction is the share of sampled rows matching a key above
// which the engine scans the located files. Measured on the benchmark lake
// (docs/fileindex.md): late materialization wins at 2.3 % (100 keys) and
// loses at 17 % (1,000 keys).
const scanMatchFraction = 0.05

// scanSampleFiles is the number of located files whose key column is
// sampled.
const scanSampleFiles = 4

// planScan decides between the late path and the engine's scan for the
// located files. It returns the SELECT over read_parquet that defines the
// index side's rows when the engine scans, "" otherwise, and the reason.
// With force (tests), the engine scans whatever share of rows match.
func planScan(ctx context.Context, db *duck.DB, m *metadata.Metadata, src *schema.Struct, on []string, lf *lateFile, files []string, force bool) (string, string, error) {
	if len(files) == 0 {
		return "", "late: no file located", nil
	}
	if m.ReadOptions.Len() > 0 {
		return "", "late: the index has read options", nil
	}
	paths := make([]string, len(files))
	for i, f := range files {
		p, ok := localPath(f)
		if !ok {
			return "", "late: files are not local (the engine reads only local files)", nil
		}
		paths[i] = p
	}
	// Sample the key column of a few located files, spread over the list,
	// at once (the files are independent; the late path reads them the
	// same way). The late path reuses what the samples read.
	n := min(scanSampleFiles, len(files))
	samples := make([]*sampledFile, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			uri := files[i*len(files)/n]
			sf := &sampledFile{}
			var err error
			if sf.pf, err = lf.plan.OpenParquetCached(ctx, lf.res, uri, lf.footers); err == nil {
				sf.matches, err = sf.pf.MatchRows(ctx, lf.col, lf.keys, &sf.st)
			}
			samples[i], errs[i] = sf, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return "", "", err
	}
	var matched, rows int64
	lf.sampled = map[string]*sampledFile{}
	for i, sf := range samples {
		matched += sf.st.RowsMatched
		rows += sf.pf.NumRows() // skipped pages and row groups included
		lf.sampled[files[i*len(files)/n]] = sf
	}
	frac := 0.0
	if rows > 0 {
		frac = float64(matched) / float64(rows)
	}
	sampled := fmt.Sprintf("%.1f%% of the rows of %d sampled files match", 100*frac, n)
	if frac <= scanMatchFraction && !force {
		return "", fmt.Sprintf("late: %s (≤ %.0f%%)", sampled, 100*scanMatchFraction), nil
	}
	// A timestamp with time zone may stay as the files have it, unconverted
	// (the rows come back as the same instants), unless SQL sees it: a
	// computed expression (hour(ts) would depend on the session's zone)
	// or a join condition (compared with the keys' TIMESTAMP by a cast).
	keepTZ := func(col string) bool { return m.ComputedIndexes.Len() == 0 && !slices.Contains(on, col) }
	sel, why, err := scanSelect(ctx, db, src, paths, keepTZ)
	if err != nil || sel == "" {
		return "", fmt.Sprintf("late: %s, but %s", sampled, why), err
	}
	return sel, fmt.Sprintf("scan: %s (> %.0f%%): the engine reads the %d located files", sampled, 100*scanMatchFraction, len(files)), nil
}

// localPath returns the local file system path of a file:// URI whose
// file exists.
func localPath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") {
		return "", false
	}
	if info, err := os.Stat(u.Path); err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	return u.Path, true
}

// scanSelect returns the SELECT of the stored columns over read_parquet of
// paths, or "" and the reason when the engine would read some column
// differently from our reader. The engine's view of the files is that of
// the first file (it refuses files whose columns differ, and the join then
// fails rather than giving other rows).
//
// keepTZ says whether a TIMESTAMP WITH TIME ZONE column read as a
// timestamp may be left as it is (no per-row conversion in the scan).
func scanSelect(ctx context.Context, db *duck.DB, src *schema.Struct, paths []string, keepTZ func(string) bool) (string, string, error) {
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = duck.String(p)
	}
	from := "read_parquet([" + strings.Join(quoted, ", ") + "], hive_partitioning = false)"
	_, rows, err := db.QueryAll(ctx, "DESCRIBE SELECT * FROM read_parquet("+quoted[0]+", hive_partitioning = false)")
	if err != nil {
		return "", "the engine cannot read the first file", nil
	}
	types := map[string]string{}
	for _, r := range rows {
		name, _ := r[0].(string)
		typ, _ := r[1].(string)
		types[name] = typ
	}
	var cols []string
	for _, f := range src.Fields {
		want, err := duck.DuckType(f.Type)
		if err != nil {
			return "", fmt.Sprintf("column %q has no engine type", f.Name), nil
		}
		got, ok := types[f.Name]
		id := duck.Ident(f.Name)
		switch {
		case pqrow.PhysicalName(f) != f.Name:
			return "", fmt.Sprintf("column %q is stored as %q (column mapping)", f.Name, pqrow.PhysicalName(f)), nil
		case !ok:
			return "", fmt.Sprintf("column %q is missing from the files", f.Name), nil
		case got == want:
			cols = append(cols, id)
		case want == "TIMESTAMP" && got == "TIMESTAMP WITH TIME ZONE" && keepTZ(f.Name):
			cols = append(cols, id)
		case want == "TIMESTAMP" && got == "TIMESTAMP WITH TIME ZONE":
			// The UTC instant, whatever the session's time zone.
			cols = append(cols, "make_timestamp(epoch_us("+id+")) AS "+id)
		default:
			return "", fmt.Sprintf("column %q is %s in the files, %s in the stored schema", f.Name, got, want), nil
		}
	}
	return "SELECT " + strings.Join(cols, ", ") + " FROM " + from, "", nil
}
