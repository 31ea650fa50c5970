package s3test_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ariadne-go/ariadne/internal/s3test"
)

// do sends one raw S3 request (gofakes3 does not check signatures) and
// returns the status and ETag.
func do(t *testing.T, s *s3test.Server, method, key, body string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.Endpoint+"/"+s3test.Bucket+"/"+key, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("ETag")
}

func TestConditionalRequests(t *testing.T) {
	s := s3test.Start(t)
	for _, tc := range []struct {
		name, method, key, body string
		hdr                     []string
		want                    int
	}{
		{"put", "PUT", "k", "v1", nil, 200},
		{"put if absent, present", "PUT", "k", "v2", []string{"If-None-Match", "*"}, 412},
		{"put if absent, absent", "PUT", "k2", "v", []string{"If-None-Match", "*"}, 200},
		{"put if match, wrong", "PUT", "k", "v2", []string{"If-Match", `"00"`}, 412},
		{"delete if match, wrong", "DELETE", "k", "", []string{"If-Match", `"00"`}, 412},
		{"delete if match, missing", "DELETE", "nope", "", []string{"If-Match", `"00"`}, 404},
		{"get after refused delete", "GET", "k", "", nil, 200},
		// md5("v1") = 6654c734ccab8f440ff0825eb443dc7f
		{"delete if match, right", "DELETE", "k", "", []string{"If-Match", `"6654c734ccab8f440ff0825eb443dc7f"`}, 204},
		{"get after delete", "GET", "k", "", nil, 404},
	} {
		if got, _ := do(t, s, tc.method, tc.key, tc.body, tc.hdr...); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	if s.Requests() != 9 {
		t.Errorf("Requests() = %d, want 9", s.Requests())
	}
}

func TestURL(t *testing.T) {
	s := s3test.Start(t)
	u := s.URL("/p/q/", "part_size=5242880")
	for _, want := range []string{"s3://" + s3test.Bucket + "/p/q?", "use_path_style=true", "anonymous=true", "&part_size=5242880", "endpoint=http%3A%2F%2F127.0.0.1%3A"} {
		if !strings.Contains(u, want) {
			t.Errorf("URL %q lacks %q", u, want)
		}
	}
}
