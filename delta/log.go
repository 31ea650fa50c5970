package delta

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ariadne-go/ariadne/store"
)

// Log object names (PROTOCOL.md, "Delta Log Entries" and "Checkpoints"):
//
//	00000000000000000010.json                                   commit 10
//	00000000000000000010.checkpoint.parquet                     classic checkpoint
//	00000000000000000010.checkpoint.0000000001.0000000003.parquet  part 1 of 3
//	00000000000000000010.checkpoint.<uuid>.json|parquet         v2 checkpoint
//	00000000000000000004.00000000000000000010.compacted.json    log compaction (ignored: optional)
//	_last_checkpoint                                            hint (not needed: we list)
//	_sidecars/<name>.parquet                                    v2 checkpoint sidecars
//
// Everything else (.crc files, _staged_commits/, temporary files) is ignored.

// versionDigits is the width of the zero-padded version in log names.
const versionDigits = 20

// CommitKey returns the store key of the JSON commit of version v.
func CommitKey(v int64) string { return fmt.Sprintf("%s%020d.json", LogDir, v) }

// checkpointKind distinguishes the checkpoint naming schemes.
type checkpointKind int

const (
	cpClassic   checkpointKind = iota // <v>.checkpoint.parquet
	cpMultiPart                       // <v>.checkpoint.<part>.<parts>.parquet
	cpV2                              // <v>.checkpoint.<uuid>.json|parquet
)

// checkpoint is one checkpoint found in the listing.
type checkpoint struct {
	version int64
	kind    checkpointKind
	keys    []string // classic/v2: one key; multi-part: keys of parts 1..n in order ("" if missing)
	parts   int
}

// complete reports whether every part is present.
func (c *checkpoint) complete() bool {
	for _, k := range c.keys {
		if k == "" {
			return false
		}
	}
	return true
}

// missing returns the key a missing part would have.
func (c *checkpoint) missing() string {
	for i, k := range c.keys {
		if k == "" {
			return fmt.Sprintf("%s%020d.checkpoint.%010d.%010d.parquet", LogDir, c.version, i+1, c.parts)
		}
	}
	return ""
}

// logListing is the result of one List of _delta_log/.
type logListing struct {
	commits     map[int64]store.ObjectInfo // version → commit object
	checkpoints []*checkpoint              // sorted by version, then preference
	sidecars    map[string]store.ObjectInfo
	maxCommit   int64 // -1 when there is no commit
}

// latest returns the newest version the log knows of: the newest commit, or
// a newer complete checkpoint (possible when commits were cleaned up).
func (l *logListing) latest() int64 {
	v := l.maxCommit
	for _, c := range l.checkpoints {
		if c.complete() && c.version > v {
			v = c.version
		}
	}
	return v
}

// listLog lists _delta_log/ with one List request and classifies its
// objects. It returns ErrNotATable when there is no commit and no checkpoint.
func listLog(ctx context.Context, s store.Store) (*logListing, error) {
	l := &logListing{
		commits:   make(map[int64]store.ObjectInfo),
		sidecars:  make(map[string]store.ObjectInfo),
		maxCommit: -1,
	}
	multi := make(map[string]*checkpoint) // "<v>/<parts>" → multi-part checkpoint
	for obj, err := range s.List(ctx, store.ListOptions{Prefix: LogDir}) {
		if err != nil {
			if errors.Is(err, store.ErrNotExist) {
				break
			}
			return nil, fmt.Errorf("delta: listing %s: %w", LogDir, err)
		}
		if obj.IsDir {
			continue
		}
		name := strings.TrimPrefix(obj.Key, LogDir)
		if rest, ok := strings.CutPrefix(name, "_sidecars/"); ok {
			if !strings.Contains(rest, "/") {
				l.sidecars[rest] = obj
			}
			continue
		}
		if strings.Contains(name, "/") || len(name) < versionDigits+1 || name[versionDigits] != '.' {
			continue
		}
		v, err := strconv.ParseInt(name[:versionDigits], 10, 64)
		if err != nil || v < 0 {
			continue
		}
		suffix := name[versionDigits+1:]
		switch {
		case suffix == "json":
			l.commits[v] = obj
			l.maxCommit = max(l.maxCommit, v)
		case suffix == "checkpoint.parquet":
			l.checkpoints = append(l.checkpoints, &checkpoint{version: v, kind: cpClassic, keys: []string{obj.Key}, parts: 1})
		case strings.HasPrefix(suffix, "checkpoint."):
			f := strings.Split(strings.TrimPrefix(suffix, "checkpoint."), ".")
			if len(f) == 3 && f[2] == "parquet" && len(f[0]) == 10 && len(f[1]) == 10 {
				part, err1 := strconv.Atoi(f[0])
				parts, err2 := strconv.Atoi(f[1])
				if err1 != nil || err2 != nil || parts < 1 || part < 1 || part > parts {
					continue
				}
				id := fmt.Sprintf("%d/%d", v, parts)
				c := multi[id]
				if c == nil {
					c = &checkpoint{version: v, kind: cpMultiPart, keys: make([]string, parts), parts: parts}
					multi[id] = c
					l.checkpoints = append(l.checkpoints, c)
				}
				c.keys[part-1] = obj.Key
			} else if len(f) == 2 && (f[1] == "json" || f[1] == "parquet") {
				l.checkpoints = append(l.checkpoints, &checkpoint{version: v, kind: cpV2, keys: []string{obj.Key}, parts: 1})
			}
		}
	}
	if len(l.commits) == 0 && len(l.checkpoints) == 0 {
		return nil, fmt.Errorf("%w: no commit or checkpoint under %s%s", ErrNotATable, s.URL(), "/"+LogDir)
	}
	// Newest first; at one version prefer v2, then classic, then multi-part
	// (all describe the same state; fewer objects to read first).
	rank := map[checkpointKind]int{cpV2: 0, cpClassic: 1, cpMultiPart: 2}
	sort.SliceStable(l.checkpoints, func(i, j int) bool {
		a, b := l.checkpoints[i], l.checkpoints[j]
		if a.version != b.version {
			return a.version > b.version
		}
		return rank[a.kind] < rank[b.kind]
	})
	return l, nil
}
