package fileindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/ariadne-go/ariadne/aerr"
	"github.com/ariadne-go/ariadne/datafile"
	"github.com/ariadne-go/ariadne/internal/pqrow"
	"github.com/ariadne-go/ariadne/internal/s3test"
	"github.com/ariadne-go/ariadne/schema"
	"github.com/ariadne-go/ariadne/store"
)

const storageSchema = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}}]}`

// storageFiles returns a Parquet file (several pages, so that page reads
// follow the footer's) and a CSV file of the same rows.
func storageFiles(t *testing.T) (pq, csv []byte) {
	t.Helper()
	st, err := schema.Parse(storageSchema)
	must(t, err)
	var rows []pqrow.Row
	var text strings.Builder
	text.WriteString("id,name\n")
	for i := range 20000 {
		rows = append(rows, pqrow.Row{int64(i), fmt.Sprintf("name-%d", i%97)})
		fmt.Fprintf(&text, "%d,name-%d\n", i, i%97)
	}
	var buf bytes.Buffer
	w := pqrow.NewWriter(&buf, st, pqrow.WriterOptions{})
	must(t, w.Write(rows...))
	_, err = w.Close()
	must(t, err)
	return buf.Bytes(), []byte(text.String())
}

// checkStorageErr: err is a storage failure naming uri, not a corrupt file.
func checkStorageErr(t *testing.T, err error, uri string) {
	t.Helper()
	if err == nil {
		t.Fatal("update succeeded through a failing store")
	}
	if !errors.Is(err, store.ErrStorage) {
		t.Errorf("error %v does not match store.ErrStorage", err)
	}
	if errors.Is(err, datafile.ErrCorruptFile) || errors.Is(err, pqrow.ErrCorrupt) || aerr.KindOf(err) == aerr.ErrCorruptDataFile {
		t.Errorf("a storage failure reported as a corrupt file: %v", err)
	}
	if !strings.Contains(err.Error(), uri) {
		t.Errorf("error %v does not name %s", err, uri)
	}
}

// TestStorageFailureIsNotCorruption: a request that fails on its way while
// update reads a data file (the blob layer returning a network error at
// the footer or at a page, the S3 server cutting the connection mid-body)
// fails the update as a storage error (store.ErrStorage) naming the file,
// never as a corrupt file; the same update succeeds once the store works.
func TestStorageFailureIsNotCorruption(t *testing.T) {
	ctx := context.Background()
	pqBytes, csvBytes := storageFiles(t)
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}

	for _, tc := range []struct {
		format string
		data   []byte
		nth    int // the data file's read that fails
	}{
		{"parquet", pqBytes, 1}, // the footer
		{"parquet", pqBytes, 2}, // a page
		{"parquet", pqBytes, 4},
		{"csv", csvBytes, 1},
	} {
		t.Run(fmt.Sprintf("blob layer %s read %d", tc.format, tc.nth), func(t *testing.T) {
			e := newUpdEnv(t)
			ro := map[string]string(nil)
			if tc.format == "csv" {
				ro = map[string]string{"header": "true"}
			}
			ix := e.open("s", storageSchema, tc.format, ro)
			p := e.dir + "/data." + tc.format
			must(t, store.WriteAll(ctx, e.root, "data."+tc.format, tc.data, nil))
			uri := updFileURI(t, p)
			updAddFiles(t, ix, uri)
			must(t, ix.AddIndex(ctx, "id"))
			res := store.NewResolver(store.ResolverOptions{Wrap: func(s store.Store) store.Store {
				return store.NewFaulty(s, store.Faults{Errors: []store.FaultRule{{
					Op: store.OpRead, Nth: tc.nth, Err: reset,
					Key: func(k string) bool { return strings.HasSuffix(k, "/data."+tc.format) },
				}}})
			}})
			defer res.Close()
			cfg := e.cfg
			_, err := New(ix, Options{Config: &cfg, Resolver: res}).Update(ctx, UpdateOptions{})
			checkStorageErr(t, err, uri)
			r := updMust(t, e.fi(ix))
			if r.NewFiles != 1 {
				t.Fatalf("retry indexed %d files, want 1", r.NewFiles)
			}
		})
	}

	t.Run("s3 connection cut mid-read", func(t *testing.T) {
		srv := s3test.Start(t)
		bucket, err := store.Open(ctx, srv.URL("", ""))
		must(t, err)
		defer bucket.Close()
		must(t, store.WriteAll(ctx, bucket, "lake/data.parquet", pqBytes, nil))
		uri := "s3://" + s3test.Bucket + "/lake/data.parquet"
		e := newUpdEnv(t)
		ix := e.open("s", storageSchema, "parquet", nil)
		updAddFiles(t, ix, uri)
		must(t, ix.AddIndex(ctx, "id"))
		res := store.NewResolver(store.ResolverOptions{Params: map[string]url.Values{"s3": {
			"endpoint": {srv.Endpoint}, "use_path_style": {"true"}, "region": {"us-east-1"}, "anonymous": {"true"},
		}}})
		defer res.Close()
		cfg := e.cfg
		fi := New(ix, Options{Config: &cfg, Resolver: res})
		// Every read of the file ends after 100 bytes of its body: the
		// footer's read (8 bytes) passes, the metadata's is cut.
		srv.CutReads(func(k string) bool { return k == "lake/data.parquet" }, 100)
		_, err = fi.Update(ctx, UpdateOptions{})
		checkStorageErr(t, err, uri)
		if !errors.Is(err, store.ErrStorage) {
			return
		}
		srv.CutReads(nil, 0)
		r, err := fi.Update(ctx, UpdateOptions{})
		must(t, err)
		if r.NewFiles != 1 {
			t.Fatalf("retry indexed %d files, want 1", r.NewFiles)
		}
	})
}
