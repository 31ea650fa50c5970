package prepared

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/ariadne-go/ariadne/store"
)

// The output of PrepareFiles is published as a set: its files are complete
// for readers only when ManifestKey exists. A run first writes PendingKey
// (and removes an earlier manifest), then the bucket files, then the
// manifest (the commit point), and last deletes PendingKey. A run killed at
// any step leaves no manifest, or a manifest that lists exactly the files
// written; ReadManifest tells a reader which. Names beginning with "_" are
// skipped by Spark, Hive and Delta readers.
const (
	// ManifestKey names the manifest at the output's root, written last.
	ManifestKey = "_ariadne_prepared.json"
	// PendingKey names the marker of a run in progress (or killed), written
	// first.
	PendingKey = "_ariadne_prepare.pending.json"
)

// ManifestVersion is the version of the manifest this package writes.
const ManifestVersion = 1

// Manifest lists a finished prepare's files. It is JSON with snake_case
// keys, numbers as numbers.
type Manifest struct {
	Version   int            `json:"version"`
	Key       string         `json:"key"`
	Sort      []string       `json:"sort,omitempty"`
	Buckets   int            `json:"buckets"`
	Rows      int64          `json:"rows"`
	Bytes     int64          `json:"bytes"`
	Files     []ManifestFile `json:"files"`
	CreatedAt time.Time      `json:"created_at"`
}

// ManifestFile is one published file.
type ManifestFile struct {
	Key    string `json:"key"` // relative to the output root
	Bucket int    `json:"bucket"`
	Rows   int64  `json:"rows"`
	Bytes  int64  `json:"bytes"`
}

// pending is the marker of a run in progress.
type pending struct {
	StartedAt time.Time `json:"started_at"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
}

// ErrIncomplete: the output folder holds no finished prepare: a run is in
// progress or was killed (its pending marker is there), or there is no
// manifest at all.
var ErrIncomplete = errors.New("prepared: output is not a finished prepare")

// IncompleteError tells why an output is not a finished prepare.
type IncompleteError struct {
	Reason string
}

func (e *IncompleteError) Error() string {
	return "prepared: output is not a finished prepare: " + e.Reason
}

// Is makes an *IncompleteError match ErrIncomplete.
func (e *IncompleteError) Is(target error) bool { return target == ErrIncomplete }

// ReadManifest returns the manifest of the finished prepare in st, checking
// that every file it lists is there with its size. Without one (a run in
// progress or killed, or no prepare at all), or when a listed file is
// missing or has another size, it returns an *IncompleteError.
func ReadManifest(ctx context.Context, st store.Store) (*Manifest, error) {
	b, err := store.ReadAll(ctx, st, ManifestKey)
	if errors.Is(err, store.ErrNotExist) {
		if _, perr := st.Stat(ctx, PendingKey); perr == nil {
			return nil, &IncompleteError{Reason: "a prepare is running there or was killed (" + PendingKey + " present, no " + ManifestKey + "); re-run it to finish"}
		}
		return nil, &IncompleteError{Reason: "no " + ManifestKey}
	}
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, &IncompleteError{Reason: fmt.Sprintf("unreadable %s: %v", ManifestKey, err)}
	}
	if m.Version < 1 || m.Version > ManifestVersion {
		return nil, &IncompleteError{Reason: fmt.Sprintf("%s version %d (this build reads up to %d)", ManifestKey, m.Version, ManifestVersion)}
	}
	for _, f := range m.Files {
		info, err := st.Stat(ctx, f.Key)
		if err != nil {
			return nil, &IncompleteError{Reason: fmt.Sprintf("listed file %s: %v", f.Key, err)}
		}
		if info.Size != f.Bytes {
			return nil, &IncompleteError{Reason: fmt.Sprintf("listed file %s has %d bytes, the manifest says %d", f.Key, info.Size, f.Bytes)}
		}
	}
	return &m, nil
}

// partFile matches the names of bucket files (FileName), in any partition.
var partFile = regexp.MustCompile(`(^|/)part-[0-9]{5}\.parquet$`)

// outputState is what an output folder holds before a run.
type outputState struct {
	finished bool     // a manifest is there
	pending  bool     // a pending marker is there (a run killed, or running)
	parts    []string // bucket files found
}

func readOutputState(ctx context.Context, dst store.Store) (outputState, error) {
	var s outputState
	for info, err := range dst.List(ctx, store.ListOptions{}) {
		if err != nil {
			return s, err
		}
		switch {
		case info.Key == ManifestKey:
			s.finished = true
		case info.Key == PendingKey:
			s.pending = true
		case partFile.MatchString(info.Key):
			s.parts = append(s.parts, info.Key)
		}
	}
	return s, nil
}

// begin prepares dst for a run: it refuses a finished output unless
// overwrite is set, and otherwise writes the pending marker, removes an
// earlier manifest and the bucket files of a killed run. It returns
// whether the run's files must overwrite (resume or overwrite) and a
// notice for the user, "" when there is nothing to say.
func begin(ctx context.Context, dst store.Store, overwrite bool) (bool, string, error) {
	s, err := readOutputState(ctx, dst)
	if err != nil {
		return false, "", err
	}
	notice := ""
	switch {
	case s.finished && !overwrite:
		return false, "", fmt.Errorf("%w: %s holds a finished prepare (%s, %d files); --overwrite replaces it",
			store.ErrPrecondition, dst.URL(), ManifestKey, len(s.parts))
	case s.finished:
		notice = fmt.Sprintf("replacing the finished prepare in %s (%d files)", dst.URL(), len(s.parts))
	case s.pending:
		notice = fmt.Sprintf("%s holds an unfinished prepare (killed or still running: %s, no %s); its %d files are replaced",
			dst.URL(), PendingKey, ManifestKey, len(s.parts))
	case len(s.parts) > 0 && !overwrite:
		return false, "", fmt.Errorf("%w: %s already holds %d bucket files (part-NNNNN.parquet) and no %s; --overwrite replaces them",
			store.ErrPrecondition, dst.URL(), len(s.parts), ManifestKey)
	}
	host, _ := os.Hostname()
	b, _ := json.Marshal(pending{StartedAt: time.Now().UTC(), Host: host, PID: os.Getpid()})
	if err := store.WriteAll(ctx, dst, PendingKey, b, nil); err != nil {
		return false, "", err
	}
	// From here on readers see no finished output.
	if s.finished {
		if err := dst.Delete(ctx, ManifestKey, nil); err != nil && !errors.Is(err, store.ErrNotExist) {
			return false, "", err
		}
	}
	if s.pending || s.finished {
		for _, k := range s.parts {
			if err := dst.Delete(ctx, k, nil); err != nil && !errors.Is(err, store.ErrNotExist) {
				return false, "", err
			}
		}
	}
	return overwrite || s.pending || s.finished, notice, nil
}

// commit writes the manifest of a finished run (the commit point) and
// removes the pending marker.
func commit(ctx context.Context, dst store.Store, o Options, st *Stats) error {
	m := Manifest{Version: ManifestVersion, Key: o.Key, Sort: o.Sort, Buckets: max(o.Buckets, 1),
		Rows: st.Rows, Bytes: st.Bytes, CreatedAt: time.Now().UTC(), Files: []ManifestFile{}}
	for _, f := range st.Files {
		m.Files = append(m.Files, ManifestFile{Key: f.Key, Bucket: f.Bucket, Rows: f.Rows, Bytes: f.Bytes})
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := store.WriteAll(ctx, dst, ManifestKey, b, nil); err != nil {
		return err
	}
	// The output is published; a leftover marker (the delete failed) is
	// harmless: the manifest wins, and the next run removes it.
	_ = dst.Delete(ctx, PendingKey, nil)
	return nil
}
