package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ariadne-go/ariadne/internal/s3test"
	"github.com/ariadne-go/ariadne/store"
)

func init() {
	extraBackends = append(extraBackends,
		backend{"s3", func(t *testing.T) store.Store {
			return mustOpen(t, s3test.Start(t).URL("", ""))
		}, true},
		backend{"s3-prefix", func(t *testing.T) store.Store {
			return mustOpen(t, s3test.Start(t).URL("some/prefix", ""))
		}, true},
	)
}

// TestS3Multipart writes objects larger than the part size, so the S3
// transfer manager uploads them in parts, and checks that IfNotExist and
// IfMatch still decide the commit (on CompleteMultipartUpload).
func TestS3Multipart(t *testing.T) {
	ctx := context.Background()
	srv := s3test.Start(t)
	s := mustOpen(t, srv.URL("mp", fmt.Sprintf("%s=%d", store.PartSizeParam, store.MinPartSize)))
	// 2 full parts and a 1 MiB tail: 3 parts.
	const size = 2*store.MinPartSize + 1<<20
	big := func(seed byte) []byte {
		b := make([]byte, size)
		for i := range b {
			b[i] = seed + byte(i*7)
		}
		return b
	}
	v1, v2 := big(1), big(2)
	before := srv.Requests()
	if err := store.WriteAll(ctx, s, "big", v1, &store.WriteOptions{IfNotExist: true}); err != nil {
		t.Fatal(err)
	}
	// create + 3 parts + complete; a single PUT would be 1 request.
	if n := srv.Requests() - before; n < 5 {
		t.Fatalf("upload took %d requests: not multipart", n)
	}
	if err := store.WriteAll(ctx, s, "big", v2, &store.WriteOptions{IfNotExist: true}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("multipart IfNotExist over an existing object: %v", err)
	}
	info, err := s.Stat(ctx, "big")
	if err != nil || info.Size != size {
		t.Fatalf("Stat = %+v, %v", info, err)
	}
	got, err := store.ReadAll(ctx, s, "big")
	if err != nil || !bytes.Equal(got, v1) {
		t.Fatalf("read back %d bytes (%v), not what the winner wrote", len(got), err)
	}
	if err := store.WriteAll(ctx, s, "big", v2, &store.WriteOptions{IfMatch: `"0123"`}); !errors.Is(err, store.ErrPrecondition) {
		t.Fatalf("multipart IfMatch with a wrong ETag: %v", err)
	}
	if err := store.WriteAll(ctx, s, "big", v2, &store.WriteOptions{IfMatch: info.ETag}); err != nil {
		t.Fatalf("multipart IfMatch with the current ETag: %v", err)
	}
	if got, _ := store.ReadAll(ctx, s, "big"); !bytes.Equal(got, v2) {
		t.Fatal("IfMatch multipart write did not replace the object")
	}
	// Ranged reads across a part boundary.
	p := make([]byte, 100)
	if _, err := store.NewReaderAt(ctx, s, "big", size).ReadAt(p, store.MinPartSize-50); err != nil || !bytes.Equal(p, v2[store.MinPartSize-50:store.MinPartSize+50]) {
		t.Fatalf("ReadAt across parts: %v", err)
	}
}
