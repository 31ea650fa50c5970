package store

import (
	"context"
	"io"
	"iter"
	"net/url"
	"path"
	"strings"
)

// Sub returns a view of s rooted at the key prefix (a folder: "a/b" and
// "a/b/" are the same). Its keys are relative to prefix, its List strips
// prefix from the keys it returns, and its URL is s's URL with prefix added
// to the path. The view shares s; its Close does nothing (close s). Sub
// panics if prefix is not a valid key, as it is a programming error.
func Sub(s Store, prefix string) Store {
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix == "" {
		return s
	}
	if err := ValidKey(prefix); err != nil {
		panic(err)
	}
	if sv, ok := s.(*subStore); ok {
		return &subStore{s: sv.s, prefix: sv.prefix + prefix + "/", url: joinURL(sv.url, prefix)}
	}
	return &subStore{s: s, prefix: prefix + "/", url: joinURL(s.URL(), prefix)}
}

// joinURL adds key segments to the path of a URL, keeping its query.
func joinURL(raw, key string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return strings.TrimSuffix(raw, "/") + "/" + key
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	u.Path = path.Join(p, key)
	u.RawPath = ""
	return u.String()
}

type subStore struct {
	s      Store
	prefix string // ends with "/"
	url    string
}

func (v *subStore) key(key string) (string, error) {
	if err := ValidKey(key); err != nil {
		return "", err
	}
	return v.prefix + key, nil
}

func (v *subStore) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	k, err := v.key(key)
	if err != nil {
		return ObjectInfo{}, err
	}
	info, err := v.s.Stat(ctx, k)
	info.Key = strings.TrimPrefix(info.Key, v.prefix)
	return info, err
}

func (v *subStore) NewRangeReader(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	k, err := v.key(key)
	if err != nil {
		return nil, err
	}
	return v.s.NewRangeReader(ctx, k, offset, length)
}

func (v *subStore) NewWriter(ctx context.Context, key string, opts *WriteOptions) (Writer, error) {
	k, err := v.key(key)
	if err != nil {
		return nil, err
	}
	return v.s.NewWriter(ctx, k, opts)
}

func (v *subStore) Delete(ctx context.Context, key string, opts *DeleteOptions) error {
	k, err := v.key(key)
	if err != nil {
		return err
	}
	return v.s.Delete(ctx, k, opts)
}

func (v *subStore) List(ctx context.Context, opts ListOptions) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		if err := validPrefix(opts.Prefix); err != nil {
			yield(ObjectInfo{}, err)
			return
		}
		opts.Prefix = v.prefix + opts.Prefix
		for info, err := range v.s.List(ctx, opts) {
			info.Key = strings.TrimPrefix(info.Key, v.prefix)
			if !yield(info, err) {
				return
			}
		}
	}
}

func (v *subStore) URL() string { return v.url }

func (v *subStore) Close() error { return nil }
