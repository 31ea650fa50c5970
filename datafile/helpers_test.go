package datafile

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

// testdata is the repository's test data (testdata/README.md), relative to this package's directory.
const testdata = "../testdata"

// fileResolver resolves file:// URIs against one store rooted at "/"
// (the store package's resolver does this and more; this is enough here).
type fileResolver struct{ st store.Store }

func newResolver(t testing.TB) *fileResolver {
	st, err := store.Open(context.Background(), "file:///")
	if err != nil {
		t.Fatal(err)
	}
	return &fileResolver{st: st}
}

func (r *fileResolver) Resolve(ctx context.Context, uri string) (store.Store, string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return nil, "", fmt.Errorf("not a file URI: %q", uri)
	}
	return r.st, strings.TrimPrefix(u.Path, "/"), nil
}

// uriOf returns the file:// URI of a path.
func uriOf(t testing.TB, path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return "file://" + filepath.ToSlash(abs)
}

// writeFile writes content into the test's temporary directory and returns
// its URI.
func writeFile(t testing.TB, name, content string) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return uriOf(t, p)
}

// mustSchema parses a schema written as "name type, ..." with Spark simple
// type names (int, bigint, double, string, timestamp, date, boolean,
// decimal(p,s)), or as full JSON when it starts with "{".
func mustSchema(t testing.TB, s string) *schema.Struct {
	t.Helper()
	if strings.HasPrefix(s, "{") {
		st, err := schema.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	names := map[string]schema.Type{
		"int": schema.Integer, "bigint": schema.Long, "double": schema.Double, "float": schema.Float,
		"string": schema.String, "timestamp": schema.Timestamp, "timestamp_ntz": schema.TimestampNTZ,
		"date": schema.Date, "boolean": schema.Boolean, "smallint": schema.Short, "tinyint": schema.Byte,
		"binary": schema.Binary,
	}
	st := &schema.Struct{}
	for _, part := range strings.Split(s, ",") {
		name, typ, _ := strings.Cut(strings.TrimSpace(part), " ")
		var ty schema.Type
		if strings.HasPrefix(typ, "decimal") {
			var p, sc int
			fmt.Sscanf(strings.ReplaceAll(typ, ";", ","), "decimal(%d,%d)", &p, &sc)
			ty = &schema.Decimal{Precision: p, Scale: sc}
		} else if ty = names[typ]; ty == nil {
			t.Fatalf("unknown type %q", typ)
		}
		st.Fields = append(st.Fields, schema.Field{Name: name, Type: ty, Nullable: true})
	}
	return st
}

// render writes a row compactly for comparisons: null, numbers in Go's
// shortest form, quoted strings, timestamps as RFC 3339 UTC with
// microseconds, dates as YYYY-MM-DD, arrays and structs in brackets.
func render(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	case []byte:
		return "b" + strconv.Quote(string(v))
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32)
	case time.Time:
		if v.Hour() == 0 && v.Minute() == 0 && v.Second() == 0 && v.Nanosecond() == 0 {
			return v.UTC().Format("2006-01-02")
		}
		return v.UTC().Format("2006-01-02T15:04:05.000000Z")
	case pqrow.Decimal:
		return v.String()
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = render(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case []pqrow.KV:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = render(e.Key) + ":" + render(e.Value)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprint(v)
}

// readAll reads every row of one file, rendering each row as a line.
func readAll(t testing.TB, uri string, spec Spec, cols []string) ([]string, error) {
	t.Helper()
	ctx := context.Background()
	rd, err := Open(ctx, newResolver(t), uri, spec, cols)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var out []string
	for {
		batch, err := rd.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		for _, row := range batch {
			if len(row) != len(rd.Schema().Fields) {
				t.Fatalf("row %v has %d values for %d fields", row, len(row), len(rd.Schema().Fields))
			}
			out = append(out, render([]any(row)))
		}
	}
}

func isFileError(err error, uri string) bool {
	var fe *FileError
	return errors.As(err, &fe) && fe.URI == uri
}

func newGzipWriter(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) }
