package store_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ariadne-go/ariadne/store"
)

// The cross-process tests re-execute the test binary as child processes
// (running TestProcessChild) that race on one file:// store; only then are
// link(2) and flock(2) really tested across processes.
const (
	envChild = "ARIADNE_STORE_CHILD" // the child's mode: "put" or "cas"
	envDir   = "ARIADNE_STORE_DIR"   // the store's root
	envID    = "ARIADNE_STORE_ID"    // the child's number

	processes    = 4  // children racing (2 per core of the target machine)
	putRounds    = 20 // keys each child tries to create
	casPerChild  = 25 // increments each child makes
	startFile    = "go"
	resultPrefix = "RESULT "
)

func TestProcessPutIfAbsent(t *testing.T) {
	dir := t.TempDir()
	out := runChildren(t, "put", dir)
	s := mustOpen(t, "file://"+dir)
	for round := range putRounds {
		key := fmt.Sprintf("_delta_log/%020d.json", round)
		var winners []string
		for id, lines := range out {
			for _, l := range lines {
				if l == "won "+key {
					winners = append(winners, strconv.Itoa(id))
				}
			}
		}
		if len(winners) != 1 {
			t.Fatalf("%s: winners %v, want exactly one", key, winners)
		}
		if got, want := mustRead(t, s, key), "child "+winners[0]; got != want {
			t.Fatalf("%s holds %q, winner wrote %q", key, got, want)
		}
	}
}

func TestProcessCASCounter(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, "file://"+dir)
	mustWrite(t, s, "counter", "0")
	runChildren(t, "cas", dir)
	if got, want := mustRead(t, s, "counter"), strconv.Itoa(processes*casPerChild); got != want {
		t.Fatalf("counter = %s, want %s (an increment was lost)", got, want)
	}
}

// runChildren starts the children, releases them together and returns
// each one's result lines.
func runChildren(t *testing.T, mode, dir string) [][]string {
	t.Helper()
	cmds := make([]*exec.Cmd, processes)
	outs := make([]*bytes.Buffer, processes)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProcessChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), envChild+"="+mode, envDir+"="+dir, envID+"="+strconv.Itoa(i))
		outs[i] = new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	if err := os.WriteFile(filepath.Join(dir, startFile), nil, 0o666); err != nil {
		t.Fatal(err)
	}
	results := make([][]string, processes)
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i])
		}
		sc := bufio.NewScanner(outs[i])
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), resultPrefix); ok {
				results[i] = append(results[i], l)
			}
		}
	}
	return results
}

// TestProcessChild is the child's side; it does nothing in a normal run.
func TestProcessChild(t *testing.T) {
	mode := os.Getenv(envChild)
	if mode == "" {
		t.Skip("only run as a child of the cross-process tests")
	}
	dir, id := os.Getenv(envDir), os.Getenv(envID)
	ctx := context.Background()
	s, err := store.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the start signal so that the children really race. (Polling
	// is bounded by the parent writing the file right after starting us.)
	for {
		if _, err := os.Stat(filepath.Join(dir, startFile)); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	switch mode {
	case "put":
		for round := range putRounds {
			key := fmt.Sprintf("_delta_log/%020d.json", round)
			err := store.WriteAll(ctx, s, key, []byte("child "+id), &store.WriteOptions{IfNotExist: true})
			switch {
			case err == nil:
				fmt.Println(resultPrefix + "won " + key)
			case !errors.Is(err, store.ErrPrecondition):
				t.Fatal(err)
			}
		}
	case "cas":
		for range casPerChild {
			if err := casIncrement(ctx, s, "counter"); err != nil {
				t.Fatal(err)
			}
		}
	}
}
