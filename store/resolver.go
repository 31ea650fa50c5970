package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// Canonical returns the canonical absolute URI of a data file given as a
// local path or a URI, the form in which files are identified in every
// index table:
//
//   - a local path (relative or absolute), "file:/abs" (Hadoop's form),
//     "file:///abs" and "file://localhost/abs" all become "file:///abs/path",
//     absolute and cleaned, with URI escaping ("a b" becomes "a%20b", as
//     Spark's input_file_name reports it);
//   - "s3://", "s3a://", "s3n://", "gs://" and "azblob://" URIs keep their
//     scheme, bucket and key (escaped the same way); the key must be a valid
//     key (see ValidKey), since object stores do not clean paths.
//
// A URI with a query, a fragment, user info or another scheme is an error.
func Canonical(pathOrURI string) (string, error) {
	scheme, _, isURI := strings.Cut(pathOrURI, ":")
	if !isURI || len(scheme) < 2 || strings.ContainsAny(scheme, `/\.`) {
		// A local path (a one-letter "scheme" would be a Windows drive).
		abs, err := filepath.Abs(pathOrURI)
		if err != nil {
			return "", fmt.Errorf("store: canonical %q: %w", pathOrURI, err)
		}
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), nil
	}
	u, err := url.Parse(pathOrURI)
	if err != nil {
		return "", fmt.Errorf("store: canonical %q: %w", pathOrURI, err)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.Opaque != "" {
		return "", fmt.Errorf("store: canonical %q: a data file URI has no query, fragment, user or opaque part", pathOrURI)
	}
	switch u.Scheme = strings.ToLower(u.Scheme); u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("store: canonical %q: not a local file", pathOrURI)
		}
		if !strings.HasPrefix(u.Path, "/") {
			return "", fmt.Errorf("store: canonical %q: file URI path is not absolute", pathOrURI)
		}
		return (&url.URL{Scheme: "file", Path: path.Clean(u.Path)}).String(), nil
	case "s3", "s3a", "s3n", "gs", "azblob":
		if u.Host == "" {
			return "", fmt.Errorf("store: canonical %q: no bucket", pathOrURI)
		}
		key := strings.TrimPrefix(u.Path, "/")
		if err := ValidKey(key); err != nil {
			return "", fmt.Errorf("store: canonical %q: %w", pathOrURI, err)
		}
		return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/" + key}).String(), nil
	}
	return "", fmt.Errorf("store: canonical %q: unsupported scheme %q", pathOrURI, u.Scheme)
}

// ResolverOptions configure a Resolver.
type ResolverOptions struct {
	// Params are default query parameters per driver scheme ("s3", "gs",
	// "azblob"), added to the URL with which the Resolver opens a bucket;
	// e.g. Params["s3"] = url.Values{"endpoint": {"http://127.0.0.1:9000"},
	// "use_path_style": {"true"}, "region": {"us-east-1"}}.
	Params map[string]url.Values
	// Wrap, if set, wraps every store the Resolver opens (e.g. NewCounting).
	Wrap func(Store) Store
}

// Resolver maps data file URIs to (Store, key) pairs, opening one Store per
// bucket (and one for the local file system, rooted at "/") on first use
// and caching it. It is safe for concurrent use. Close closes the stores it
// opened.
//
// s3a:// and s3n:// URIs (Hadoop's names) resolve to the s3 driver.
type Resolver struct {
	opts ResolverOptions

	mu         sync.Mutex
	stores     map[string]Store // by root URI: "file:///", "s3://bucket"
	registered map[string]Store // by root URI, owned by the caller
	closed     bool
}

// NewResolver returns a Resolver with the given options.
func NewResolver(opts ResolverOptions) *Resolver {
	return &Resolver{opts: opts, stores: make(map[string]Store), registered: make(map[string]Store)}
}

// Register makes URIs below root (a canonical directory or bucket URI such
// as "s3://bucket/prefix" or "file:///data") resolve to s, with keys
// relative to root. The longest registered root wins over the Resolver's
// own stores. s stays the caller's: Close does not close it. Use it to
// serve URIs from a mem:// store in tests, or a Counting store.
func (r *Resolver) Register(root string, s Store) error {
	// Canonicalise a key below root, so that a bare bucket is accepted.
	const probe = "/_"
	c, err := Canonical(strings.TrimSuffix(root, "/") + probe)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.registered[strings.TrimSuffix(c, probe)] = s
	return nil
}

// Resolve returns the store holding the file at uri (a local path or URI,
// see Canonical) and its key there.
func (r *Resolver) Resolve(ctx context.Context, uri string) (Store, string, error) {
	c, err := Canonical(uri)
	if err != nil {
		return nil, "", err
	}
	u, err := url.Parse(c)
	if err != nil {
		return nil, "", fmt.Errorf("store: resolve %q: %w", uri, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, "", errors.New("store: resolver is closed")
	}
	best := ""
	for root := range r.registered {
		if strings.HasPrefix(c, root+"/") && len(root) > len(best) {
			best = root
		}
	}
	if best != "" {
		key, err := url.PathUnescape(c[len(best)+1:])
		if err != nil {
			return nil, "", fmt.Errorf("store: resolve %q: %w", uri, err)
		}
		return r.registered[best], key, nil
	}
	scheme := u.Scheme
	if scheme == "s3a" || scheme == "s3n" {
		scheme = "s3"
	}
	root := scheme + "://" + u.Host
	if scheme == "file" {
		root = "file:///"
	}
	key := strings.TrimPrefix(u.Path, "/")
	if err := ValidKey(key); err != nil {
		return nil, "", fmt.Errorf("store: resolve %q: %w", uri, err)
	}
	s, ok := r.stores[root]
	if !ok {
		open := root
		if p := r.opts.Params[scheme]; len(p) > 0 {
			open += "?" + p.Encode()
		}
		s, err = Open(ctx, open)
		if err != nil {
			return nil, "", err
		}
		if r.opts.Wrap != nil {
			s = r.opts.Wrap(s)
		}
		r.stores[root] = s
	}
	return s, key, nil
}

// Close closes every store the Resolver opened (not registered ones) and
// returns the first error.
func (r *Resolver) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	var first error
	for root, s := range r.stores {
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
		delete(r.stores, root)
	}
	return first
}
