package delta

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ariadne-go/ariadne/store"
)

// VacuumOptions configure Vacuum.
type VacuumOptions struct {
	// DryRun lists what would be deleted without deleting.
	DryRun bool
	// AllowShortRetention permits a retention shorter than the table's
	// delta.deletedFileRetentionDuration (default 7 days), as Spark's
	// spark.databricks.delta.retentionDurationCheck.enabled=false does.
	// Short retentions can break concurrent readers of old versions and
	// writers that have written but not yet committed files.
	AllowShortRetention bool
	// Now overrides the current time (tests).
	Now time.Time
}

// DefaultDeletedFileRetention is Delta's default
// delta.deletedFileRetentionDuration: 7 days.
const DefaultDeletedFileRetention = 7 * 24 * time.Hour

// Vacuum deletes files under the table root that the latest snapshot does
// not reference and that are older than retention: data files removed by
// commits more than retention ago, and files never committed (left by
// failed writers) last modified more than retention ago. It never deletes a
// file the latest snapshot references (data or deletion vector), anything
// under _delta_log/, or hidden paths (a segment starting with "_" or ".",
// except partition folders). It returns the deleted (or, with DryRun,
// deletable) keys in ascending order.
func (t *Table) Vacuum(ctx context.Context, retention time.Duration, opts VacuumOptions) ([]string, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	minRetention := DefaultDeletedFileRetention
	if v, ok := snap.metadata.Configuration["delta.deletedFileRetentionDuration"]; ok {
		if d, err := parseInterval(v); err == nil {
			minRetention = d
		}
	}
	if retention < 0 {
		return nil, fmt.Errorf("delta: negative vacuum retention %v", retention)
	}
	if retention < minRetention && !opts.AllowShortRetention {
		return nil, fmt.Errorf("delta: vacuum retention %v is shorter than the table's %v; set AllowShortRetention to force it", retention, minRetention)
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	cutoff := now.Add(-retention)
	keep := map[string]bool{}
	for _, f := range snap.files {
		if p, err := DecodePath(f.Path); err == nil {
			keep[p] = true
		}
		if f.DeletionVector != nil {
			if p, err := f.DeletionVector.DVFilePath(); err == nil && p != "" {
				keep[p] = true
			}
		}
	}
	// Tombstones younger than the retention protect their files even if
	// the file's own modification time is older.
	for _, r := range snap.tombs {
		if r.DeletionTimestamp != nil && time.UnixMilli(*r.DeletionTimestamp).After(cutoff) {
			if p, err := DecodePath(r.Path); err == nil {
				keep[p] = true
			}
		}
	}
	var out []string
	for info, err := range t.st.List(ctx, store.ListOptions{}) {
		if err != nil {
			return out, err
		}
		if info.IsDir || hiddenPath(info.Key) || keep[info.Key] || info.ModTime.After(cutoff) {
			continue
		}
		if !opts.DryRun {
			if err := t.st.Delete(ctx, info.Key, nil); err != nil && !isNotExist(err) {
				return out, fmt.Errorf("delta: vacuum: deleting %s: %w", info.Key, err)
			}
		}
		out = append(out, info.Key)
	}
	return out, nil
}

// hiddenPath reports whether Delta's VACUUM leaves a key alone: any
// segment starting with "_" or "." (the log, _SUCCESS, .crc files),
// except partition folders ("_col=v"), which contain "=".
func hiddenPath(key string) bool {
	for _, seg := range strings.Split(key, "/") {
		if (strings.HasPrefix(seg, "_") || strings.HasPrefix(seg, ".")) && !strings.Contains(seg, "=") {
			return true
		}
	}
	return false
}

func isNotExist(err error) bool { return errors.Is(err, store.ErrNotExist) }

// parseInterval parses Delta's "interval 7 days" style durations (also
// plain Go durations).
func parseInterval(s string) (time.Duration, error) {
	f := strings.Fields(strings.ToLower(s))
	if len(f) > 0 && f[0] == "interval" {
		f = f[1:]
	}
	if len(f) == 2 {
		var n int64
		if _, err := fmt.Sscanf(f[0], "%d", &n); err != nil {
			return 0, err
		}
		unit := strings.TrimSuffix(f[1], "s")
		switch unit {
		case "week":
			return time.Duration(n) * 7 * 24 * time.Hour, nil
		case "day":
			return time.Duration(n) * 24 * time.Hour, nil
		case "hour":
			return time.Duration(n) * time.Hour, nil
		case "minute":
			return time.Duration(n) * time.Minute, nil
		case "second":
			return time.Duration(n) * time.Second, nil
		}
	}
	return time.ParseDuration(s)
}
