package delta

import (
	"fmt"
	"net/url"
	"strings"
)

// DecodePath decodes a path as found in an add or remove action: the
// protocol stores paths as URIs (RFC 2396), so "x=a%20b/part-0.parquet"
// names the file "x=a b/part-0.parquet". Absolute URIs ("s3://b/k") are
// decoded the same way and stay absolute.
func DecodePath(p string) (string, error) {
	d, err := url.PathUnescape(p)
	if err != nil {
		return "", fmt.Errorf("path %q is not a valid URI path: %w", p, err)
	}
	return d, nil
}

// EncodePath is the inverse of DecodePath for relative paths: it
// percent-encodes, byte by byte, everything that java.net.URI would not keep
// in a path (Spark writes paths with new Path(..).toUri.toString), so that
// Spark, delta-rs and this package decode the same file name. Non-ASCII
// bytes are encoded too (valid for every reader; java.net.URI would keep
// them raw).
func EncodePath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if isURIPathByte(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// isURIPathByte reports whether java.net.URI keeps c unescaped in a path:
// unreserved (alphanumerics and -_.!~*'()), the path punctuation ;:@&=+$,
// and the separator /.
func isURIPathByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_.!~*'();:@&=+$,/", c) >= 0
}

// isAbsoluteURI reports whether a decoded path is an absolute URI
// ("s3://b/k", "file:/x") rather than a path relative to the table root.
func isAbsoluteURI(p string) bool {
	i := strings.IndexByte(p, ':')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := p[j]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || j > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return !strings.Contains(p[:i], "/")
}
