package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SweepTemps deletes the temporary files that writes to s left behind in
// the folder key dir (and below it) and that were last modified before
// cutoff. A write of the file backend goes to a temporary file
// (".ariadne-tmp-…") in the object's folder and is then linked or renamed
// into place; a process killed in between leaves the temporary file,
// which List never shows and no key can name, so only this sweep finds
// it. The cutoff keeps in-flight writes of other processes safe: pass a
// time far enough in the past (vacuum's retention).
//
// Only the file backend writes temporary files: for every other store,
// and for a file store behind a wrapper other than Sub, SweepTemps does
// nothing. A missing folder sweeps nothing. Folders below dir left empty
// are removed too. It returns the keys of the files deleted, relative to
// s, and of the folders removed, with a trailing "/".
func SweepTemps(ctx context.Context, s Store, dir string, cutoff time.Time) ([]string, error) {
	dir = strings.Trim(dir, "/")
	base := ""
	if sub, ok := s.(*subStore); ok {
		s, base = sub.s, sub.prefix
	}
	f, ok := s.(*fileStore)
	if !ok {
		return nil, nil
	}
	root := filepath.Join(f.root, filepath.FromSlash(base+dir))
	var deleted, dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // the folder (or an entry) vanished meanwhile
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != root {
				dirs = append(dirs, p)
			}
			return nil
		}
		if !strings.HasPrefix(d.Name(), tmpPrefix) {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			return nil // vanished, or recent: perhaps a write in flight
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &OpError{Op: "sweep", Key: dir, Err: err}
		}
		rel, _ := filepath.Rel(filepath.Join(f.root, filepath.FromSlash(base)), p)
		deleted = append(deleted, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return deleted, err
	}
	// Folders left empty (a killed run's staging/ once its temporary
	// files are gone) are removed, deepest first; they hold no object, so
	// no key names them. os.Remove refuses a folder that is not empty, and
	// a write racing with the removal retries its folder (createTemp).
	for i := len(dirs) - 1; i >= 0; i-- {
		if os.Remove(dirs[i]) == nil {
			rel, _ := filepath.Rel(filepath.Join(f.root, filepath.FromSlash(base)), dirs[i])
			deleted = append(deleted, filepath.ToSlash(rel)+"/")
		}
	}
	return deleted, nil
}
