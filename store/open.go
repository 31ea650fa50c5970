package store

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Open opens the store that rawURL names:
//
//	file:///abs/dir     a local folder (created on first write); a plain
//	                    local path, relative or absolute, means the same
//	mem://              a fresh, empty in-memory store (every Open returns a
//	                    new one; nothing is shared between Opens)
//	s3://bucket/prefix?region=R&endpoint=http://host:port&use_path_style=true
//	gs://bucket/prefix
//	azblob://container/prefix
//
// For s3, gs and azblob a path below the bucket is a key prefix: the store's
// keys are relative to it. Their query parameters are those of gocloud.dev's
// URL openers (s3: region, endpoint, use_path_style, disable_https, profile,
// anonymous, …; credentials come from the usual AWS_* environment variables
// and files; gs: credentials from Application Default Credentials; azblob:
// AZURE_STORAGE_ACCOUNT and its key, SAS token or Azure AD identity).
//
// The returned Store's URL() is rawURL normalised (a local path becomes a
// file:// URL).
func Open(ctx context.Context, rawURL string) (Store, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok || strings.ContainsAny(scheme, "/\\") {
		// A plain local path.
		abs, err := filepath.Abs(rawURL)
		if err != nil {
			return nil, fmt.Errorf("store: open %q: %w", rawURL, err)
		}
		return newFile(abs), nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("store: open %q: %w", rawURL, err)
	}
	switch strings.ToLower(scheme) {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("store: open %q: file URLs name local paths only (file:///abs/dir)", rawURL)
		}
		if !filepath.IsAbs(u.Path) {
			return nil, fmt.Errorf("store: open %q: file URL path must be absolute", rawURL)
		}
		return newFile(filepath.FromSlash(u.Path)), nil
	case "mem":
		if rest != "" {
			return nil, fmt.Errorf("store: open %q: mem URLs take no name or path (each Open is a fresh store)", rawURL)
		}
		return newMem("mem://"), nil
	case "s3", "gs", "azblob":
		return openBlob(ctx, u)
	default:
		return nil, fmt.Errorf("store: open %q: unsupported scheme %q", rawURL, scheme)
	}
}

// redact returns u as a string without user info, for Store.URL.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}
