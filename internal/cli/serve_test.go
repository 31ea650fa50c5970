package cli

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestServeFlags(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run(t, dir, "serve", "--tls-cert", "c.pem"); code != 2 || !strings.Contains(errs, "--tls-key") {
		t.Fatalf("--tls-cert alone: %d %s", code, errs)
	}
	if code, _, errs := run(t, dir, "serve", "--token-env", "ARIADNE_TEST_NO_SUCH_VAR"); code != 2 {
		t.Fatalf("--token-env unset: %d %s", code, errs)
	}
}

// TestServeCommand runs `ariadne serve` on a free loopback port with a token
// file, calls it, and stops it as a signal would (the command's context).
func TestServeCommand(t *testing.T) {
	dir := t.TempDir()
	runOK(t, dir, "list") // the store exists
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("\n t0k \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--listen", addr, "--token-file", tokens, "--poll", "100ms"}, Env{
			Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			LookupEnv: func(k string) (string, bool) {
				if k == "ARIADNE_STORE" {
					return "file://" + dir, true
				}
				return "", false
			},
		})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("not ready: %v\n%s", err, errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for tok, want := range map[string]int{"": 401, "t0k": 200} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/v1/indexes", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("token %q: %d, want %d", tok, resp.StatusCode, want)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "msg=stopped") {
		t.Fatalf("no graceful stop in the log:\n%s", errb.String())
	}
}

// TestServeJSONLog: with --json the server's log on stderr is JSON lines
// in the CLI's vocabulary ({"event": "log", "time", "level", "message"},
// durations as *_seconds numbers).
func TestServeJSONLog(t *testing.T) {
	dir := t.TempDir()
	runOK(t, dir, "list") // the store exists
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"--json", "serve", "--listen", addr, "--poll", "100ms"}, Env{
			Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
			LookupEnv: func(k string) (string, bool) {
				if k == "ARIADNE_STORE" {
					return "file://" + dir, true
				}
				return "", false
			},
		})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("not ready: %v\n%s", err, errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
	evs := checkEventLines(t, "serve --json", errb.String())
	msgs := map[string]map[string]any{}
	for _, ev := range evs {
		if ev["event"] != "log" || ev["level"] == nil || ev["time"] == nil || ev["msg"] != nil {
			t.Errorf("serve --json: %v, want a log event", ev)
		}
		if m, ok := ev["message"].(string); ok {
			msgs[m] = ev
		}
	}
	if _, ok := msgs["stopped"]; !ok {
		t.Errorf("no stop in the log: %s", errb.String())
	}
	if ev, ok := msgs["shutting down: draining requests in flight"]; !ok || ev["timeout_seconds"] == nil || ev["timeout"] != nil {
		t.Errorf("shutdown line: %v, want timeout_seconds (a number of seconds)", ev)
	}
	if out.String() != "" {
		t.Errorf("serve --json wrote to stdout: %q", out.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
