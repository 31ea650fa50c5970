package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	azblobblob "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // registers azblob://
	_ "gocloud.dev/blob/gcsblob"   // registers gs://
	_ "gocloud.dev/blob/s3blob"    // registers s3://
	"gocloud.dev/gcerrors"
)

// PartSizeParam is the query parameter of s3:// URLs, handled by this
// package rather than gocloud.dev, that sets the multipart part size in
// bytes; objects of at least that size are uploaded in parts. The default
// (transfermanager's) is 8 MiB parts above a 16 MiB threshold. S3 requires
// parts of at least 5 MiB (MinPartSize), except the last.
const PartSizeParam = "part_size"

// MinPartSize is S3's smallest allowed part, 5 MiB, except for the last part.
const MinPartSize = 5 << 20

// listPageSize is the number of keys asked per List request: 1000 is the
// maximum S3 returns per ListObjectsV2 call, so fewer would only cost more
// requests.
const listPageSize = 1000

// blobKind names the gocloud.dev driver behind a blobStore, which decides
// how ETags and conditions are expressed.
type blobKind int

const (
	kindS3 blobKind = iota
	kindGCS
	kindAzure
)

// blobStore is the backend for s3://, gs:// and azblob://, on gocloud.dev's
// blob.Bucket, with the driver-specific precondition plumbing that gocloud
// does not abstract.
//
// Conditional writes, small and large:
//   - S3: the transfer manager uploads objects below the multipart threshold
//     (PartSizeParam) with one PutObject carrying If-None-Match: * or
//     If-Match: <etag>; larger ones as a multipart upload whose
//     CompleteMultipartUpload carries the same header, so the condition is
//     checked atomically when the object becomes visible, at any size.
//     Conditional Delete sends DeleteObject with If-Match.
//   - GCS: ETags are object generations; every upload (single or
//     resumable) carries ifGenerationMatch=0 (IfNotExist) or =<generation>
//     (IfMatch), checked when the upload is finalised; Delete likewise.
//   - Azure: block blobs are staged and committed by Put Block List with
//     If-None-Match: * or If-Match: <etag>; Delete with If-Match.
//
// ETags: S3's is the object's MD5-based ETag (so rewriting identical bytes
// in one PUT keeps the ETag), GCS's is the generation number, Azure's the
// blob ETag.
type blobStore struct {
	kind     blobKind
	bucket   *blob.Bucket // prefixed when the URL has a path
	url      string
	s3client *s3.Client // kindS3 only
	partSize int64      // kindS3 only; 0: transfermanager's default
}

func openBlob(ctx context.Context, u *url.URL) (Store, error) {
	shown := redact(u)
	fail := func(err error) (Store, error) { return nil, fmt.Errorf("store: open %s: %w", shown, err) }
	s := &blobStore{url: shown}
	switch u.Scheme {
	case "s3":
		s.kind = kindS3
	case "gs":
		s.kind = kindGCS
	default:
		s.kind = kindAzure
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		if err := ValidKey(prefix); err != nil {
			return fail(err)
		}
	}
	q := u.Query()
	if v := q.Get(PartSizeParam); v != "" {
		if s.kind != kindS3 {
			return fail(fmt.Errorf("%s applies to s3:// only", PartSizeParam))
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < MinPartSize {
			return fail(fmt.Errorf("%s=%q: want an integer >= %d", PartSizeParam, v, MinPartSize))
		}
		s.partSize = n
		q.Del(PartSizeParam)
	}
	if s.kind == kindS3 && !q.Has("response_checksum_validation") {
		// Validate response checksums only when asked for: ranged GETs
		// (every NewRangeReader) carry none, and the SDK would otherwise log
		// that it cannot validate them, once per read.
		q.Set("response_checksum_validation", "when_required")
	}
	bu := url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: q.Encode()}
	bucket, err := blob.OpenBucket(ctx, bu.String())
	if err != nil {
		return fail(err)
	}
	if s.kind == kindS3 && !bucket.As(&s.s3client) {
		bucket.Close()
		return fail(errors.New("s3 bucket exposes no *s3.Client"))
	}
	if prefix != "" {
		bucket = blob.PrefixedBucket(bucket, prefix+"/")
	}
	s.bucket = bucket
	return s, nil
}

// mapBlobErr maps gocloud error codes onto the store's errors, keeping the
// original in the chain.
func mapBlobErr(op, key string, err error) error {
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		return &OpError{Op: op, Key: key, Err: fmt.Errorf("%w: %w", ErrNotExist, err)}
	case gcerrors.FailedPrecondition:
		return &OpError{Op: op, Key: key, Err: fmt.Errorf("%w: %w", ErrPrecondition, err)}
	}
	return &OpError{Op: op, Key: key, Err: err}
}

func (s *blobStore) Stat(ctx context.Context, key string) (ObjectInfo, error) {
	if err := ValidKey(key); err != nil {
		return ObjectInfo{}, err
	}
	a, err := s.bucket.Attributes(ctx, key)
	if err != nil {
		return ObjectInfo{}, mapBlobErr("stat", key, err)
	}
	info := ObjectInfo{Key: key, Size: a.Size, ModTime: a.ModTime, ETag: a.ETag}
	if s.kind == kindGCS {
		var oa storage.ObjectAttrs
		if a.As(&oa) {
			info.ETag = strconv.FormatInt(oa.Generation, 10)
		}
	}
	return info, nil
}

func (s *blobStore) NewRangeReader(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if err := ValidKey(key); err != nil {
		return nil, err
	}
	if err := checkRange(key, offset); err != nil {
		return nil, err
	}
	if length == 0 {
		// Nothing to read, but a missing object must still be reported.
		if _, err := s.Stat(ctx, key); err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(nil)), nil
	}
	r, err := s.bucket.NewRangeReader(ctx, key, offset, length, nil)
	if err == nil {
		return &blobReader{Reader: r, key: key}, nil
	}
	if offset > 0 && gcerrors.Code(err) != gcerrors.NotFound {
		// S3 and Azure refuse a range that starts at or past the end (416);
		// the contract reads that as empty.
		if info, serr := s.Stat(ctx, key); serr == nil && offset >= info.Size {
			return io.NopCloser(bytes.NewReader(nil)), nil
		}
	}
	return nil, mapBlobErr("read", key, err)
}

// blobReader marks errors of reading a body as the request's (ErrStorage):
// a connection cut mid-body surfaces here as io.ErrUnexpectedEOF, which a
// Parquet reader would otherwise take for a truncated file.
type blobReader struct {
	*blob.Reader
	key string
}

func (r *blobReader) Read(p []byte) (int, error) {
	n, err := r.Reader.Read(p)
	return n, readFailure(r.key, err)
}

func (s *blobStore) NewWriter(ctx context.Context, key string, opts *WriteOptions) (Writer, error) {
	if err := ValidKey(key); err != nil {
		return nil, err
	}
	if err := checkWriteOptions(key, opts); err != nil {
		return nil, err
	}
	var o WriteOptions
	if opts != nil {
		o = *opts
	}
	wo := &blob.WriterOptions{
		ContentType: o.ContentType,
		IfNotExist:  o.IfNotExist,
		// Without a content type gocloud sniffs the first 512 bytes; we
		// declare bytes instead, as object stores do by default.
		DisableContentTypeDetection: true,
	}
	if wo.ContentType == "" {
		wo.ContentType = "application/octet-stream"
	}
	if o.IfMatch != "" || (s.kind == kindS3 && s.partSize > 0) {
		wo.BeforeWrite = func(as func(any) bool) error { return s.beforeWrite(as, o.IfMatch) }
	}
	wctx, cancel := context.WithCancel(ctx)
	w, err := s.bucket.NewWriter(wctx, key, wo)
	if err != nil {
		cancel()
		return nil, mapBlobErr("write", key, err)
	}
	return &blobWriter{w: w, key: key, cancel: cancel, ifMatch: o.IfMatch != ""}, nil
}

// beforeWrite applies IfMatch and the S3 part size through the driver's
// own types.
func (s *blobStore) beforeWrite(as func(any) bool, ifMatch string) error {
	switch s.kind {
	case kindS3:
		if s.partSize > 0 {
			var tm *transfermanager.Client
			if !as(&tm) {
				return errors.New("s3 writer exposes no transfer manager")
			}
			checksum := s.s3client.Options().RequestChecksumCalculation
			*tm = *transfermanager.New(s.s3client, func(o *transfermanager.Options) {
				o.PartSizeBytes = s.partSize
				o.MultipartUploadThreshold = s.partSize
				o.RequestChecksumCalculation = checksum
			})
		}
		if ifMatch != "" {
			var in *transfermanager.UploadObjectInput
			if !as(&in) {
				return errors.New("s3 writer exposes no UploadObjectInput")
			}
			in.IfMatch = &ifMatch
		}
	case kindGCS:
		return gcsIfMatch(as, ifMatch, "writer")
	case kindAzure:
		var uo *azblob.UploadStreamOptions
		if !as(&uo) {
			return errors.New("azure writer exposes no UploadStreamOptions")
		}
		uo.AccessConditions = azureIfMatch(ifMatch)
	}
	return nil
}

type blobWriter struct {
	w       *blob.Writer
	key     string
	cancel  context.CancelFunc
	ifMatch bool
	done    bool
}

func (w *blobWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, errWriterDone
	}
	n, err := w.w.Write(p)
	if err != nil {
		w.Abort()
		return n, mapBlobErr("write", w.key, err)
	}
	return n, nil
}

func (w *blobWriter) Close() error {
	if w.done {
		return errWriterDone
	}
	w.done = true
	defer w.cancel()
	if err := w.w.Close(); err != nil {
		if w.ifMatch && gcerrors.Code(err) == gcerrors.NotFound {
			// S3 answers If-Match on a missing object with 404.
			return &OpError{Op: "write", Key: w.key, Err: fmt.Errorf("%w: %w", ErrPrecondition, err)}
		}
		return mapBlobErr("write", w.key, err)
	}
	return nil
}

// Abort cancels the upload's context before closing, which makes gocloud
// abandon the upload (and the S3 transfer manager abort a multipart upload)
// instead of committing it.
func (w *blobWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.cancel()
	w.w.Close()
	return nil
}

func (s *blobStore) Delete(ctx context.Context, key string, opts *DeleteOptions) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	var do *blob.DeleteOptions
	if opts != nil && opts.IfMatch != "" {
		ifMatch := opts.IfMatch
		do = &blob.DeleteOptions{BeforeDelete: func(as func(any) bool) error {
			switch s.kind {
			case kindS3:
				var in *s3.DeleteObjectInput
				if !as(&in) {
					return errors.New("s3 delete exposes no DeleteObjectInput")
				}
				in.IfMatch = &ifMatch
			case kindGCS:
				return gcsIfMatch(as, ifMatch, "delete")
			case kindAzure:
				var do *azblobblob.DeleteOptions
				if !as(&do) {
					return errors.New("azure delete exposes no DeleteOptions")
				}
				do.AccessConditions = azureIfMatch(ifMatch)
			}
			return nil
		}}
	}
	if err := s.bucket.DeleteWithOptions(ctx, key, do); err != nil {
		if errors.Is(err, ErrPrecondition) {
			return &OpError{Op: "delete", Key: key, Err: err}
		}
		return mapBlobErr("delete", key, err)
	}
	return nil
}

// List pages through the bucket listPageSize keys at a time. Each page is
// sorted because some drivers (Azure) return a page's common prefixes
// before its objects; pages themselves come in key order.
func (s *blobStore) List(ctx context.Context, opts ListOptions) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		if err := validPrefix(opts.Prefix); err != nil {
			yield(ObjectInfo{}, err)
			return
		}
		if err := checkDelimiter(opts.Delimiter); err != nil {
			yield(ObjectInfo{}, err)
			return
		}
		lo := &blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter}
		token := blob.FirstPageToken
		for {
			objs, next, err := s.bucket.ListPage(ctx, token, listPageSize, lo)
			if err != nil {
				yield(ObjectInfo{}, mapBlobErr("list", opts.Prefix, err))
				return
			}
			slices.SortFunc(objs, func(a, b *blob.ListObject) int { return strings.Compare(a.Key, b.Key) })
			for _, o := range objs {
				if !yield(s.listInfo(o), nil) {
					return
				}
			}
			if len(next) == 0 {
				return
			}
			token = next
		}
	}
}

func (s *blobStore) listInfo(o *blob.ListObject) ObjectInfo {
	info := ObjectInfo{Key: o.Key, Size: o.Size, ModTime: o.ModTime, IsDir: o.IsDir}
	if o.IsDir {
		return ObjectInfo{Key: o.Key, IsDir: true}
	}
	switch s.kind {
	case kindS3:
		var so s3types.Object
		if o.As(&so) && so.ETag != nil {
			info.ETag = *so.ETag
		}
	case kindGCS:
		var oa storage.ObjectAttrs
		if o.As(&oa) {
			info.ETag = strconv.FormatInt(oa.Generation, 10)
		}
	case kindAzure:
		var bi container.BlobItem
		if o.As(&bi) && bi.Properties != nil && bi.Properties.ETag != nil {
			info.ETag = string(*bi.Properties.ETag)
		}
	}
	return info
}

func (s *blobStore) URL() string { return s.url }

func (s *blobStore) Close() error { return s.bucket.Close() }

// gcsIfMatch makes a GCS write or delete conditional on the object's
// generation, which is what our GCS ETags are.
func gcsIfMatch(as func(any) bool, ifMatch, op string) error {
	gen, err := strconv.ParseInt(ifMatch, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: GCS ETag %q is not a generation", ErrPrecondition, ifMatch)
	}
	var h **storage.ObjectHandle
	if !as(&h) {
		return fmt.Errorf("gcs %s exposes no ObjectHandle", op)
	}
	*h = (*h).If(storage.Conditions{GenerationMatch: gen})
	return nil
}

// azureIfMatch is the Azure access condition "the blob still has this ETag".
func azureIfMatch(ifMatch string) *azblobblob.AccessConditions {
	etag := azcore.ETag(ifMatch)
	return &azblobblob.AccessConditions{ModifiedAccessConditions: &azblobblob.ModifiedAccessConditions{IfMatch: &etag}}
}
