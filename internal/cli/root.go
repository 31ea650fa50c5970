// Package cli implements the ariadne command line: flag parsing, the choice
// of store and configuration, and output for people (aligned text) and for
// programs (--json). It holds no logic of its own beyond presentation: every
// command is a thin call into the index, delta and store packages.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ariadne-go/ariadne/aerr"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/config"
	"github.com/ariadne-go/ariadne/store"
)

// DefaultStoreDir is the embedded default store: a local folder.
const DefaultStoreDir = "./ariadne-data"

// Env is the process environment a command runs in (explicit, for tests).
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	LookupEnv      func(string) (string, bool)
}

// globals are the flags every command takes.
type globals struct {
	env        Env
	storeURL   string
	jsonOut    bool
	configFile string
	set        []string
}

// Main runs the command line and returns the process exit code: 0 on
// success, 1 on a failed command, 2 on a usage error.
func Main(ctx context.Context, args []string, env Env) int {
	if env.LookupEnv == nil {
		env.LookupEnv = func(string) (string, bool) { return "", false }
	}
	g := &globals{env: env}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	if errors.Is(err, aerr.ErrIndexNotFound) {
		// Name the store: the usual cause is a --store (or $ARIADNE_STORE)
		// other than the one the index lives in.
		if u, uerr := g.resolvedStoreURL(); uerr == nil {
			err = fmt.Errorf("%w (in store %s)", err, u)
		}
	}
	var ue *usageError
	code := 1
	if errors.As(err, &ue) || isCobraUsage(err) {
		code = 2
	}
	if !g.jsonOut && jsonAsked(args) {
		g.jsonOut = true // the command line failed before --json was parsed
	}
	g.printError(err)
	return code
}

// jsonAsked reports whether args carry --json before any "--": a command
// line that fails while its flags are parsed still answers in JSON.
func jsonAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "--json=true", "--json=1":
			return true
		}
	}
	return false
}

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "ariadne",
		Short:         "Ariadne: an index for the data lake",
		Long:          "Ariadne indexes Parquet, CSV and JSON files where they lie (local folders, S3, GCS, Azure)\nand tells which files can hold a key.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.storeURL, "store", "", "store root URL (file:///dir, s3://bucket/prefix?endpoint=..., gs://, azblob://, mem://); default $ARIADNE_STORE, else "+DefaultStoreDir)
	pf.BoolVar(&g.jsonOut, "json", false, "print machine-readable JSON")
	pf.StringVar(&g.configFile, "config", "", "config file (JSON or key=value lines); default $ARIADNE_CONFIG")
	pf.StringArrayVar(&g.set, "set", nil, "set a configuration key for this command (key=value, repeatable)")
	root.AddCommand(
		newCreateCmd(g), newListCmd(g), newDescribeCmd(g), newRemoveCmd(g), newFindIndexesCmd(g),
		newAddFilesCmd(g), newFilesCmd(g), newAddIndexCmd(g), newUpdateCmd(g), newLocateCmd(g), newJoinCmd(g),
		newStatsCmd(g), newDeleteFilesCmd(g), newCompactCmd(g), newVacuumCmd(g), newAddRowIndexCmd(g), newLookupCmd(g),
		newDropRowIndexCmd(g), newWarmCmd(g), newBenchCmd(g), newDeltaCmd(g), newPrepareCmd(g), newServeCmd(g), newMCPCmd(g),
	)
	return root
}

// usageError marks errors in how the command was called (exit code 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "unknown flag") ||
		strings.HasPrefix(s, "unknown shorthand flag") || strings.Contains(s, "arg(s)") ||
		strings.HasPrefix(s, "flag needs an argument") || strings.HasPrefix(s, "invalid argument")
}

// storeURL resolves --store, $ARIADNE_STORE, then the default folder.
func (g *globals) resolvedStoreURL() (string, error) {
	u := g.storeURL
	if u == "" {
		if v, ok := g.env.LookupEnv("ARIADNE_STORE"); ok && v != "" {
			u = v
		}
	}
	if u == "" {
		abs, err := filepath.Abs(DefaultStoreDir)
		if err != nil {
			return "", err
		}
		u = "file://" + filepath.ToSlash(abs)
	}
	if isMemURL(u) {
		return "", usagef("--store %s: a mem:// store lives only as long as one process, and every ariadne command is its own process, so whatever a command writes there is gone when it exits; use a folder (a path or file:///dir) or an object store (s3://, gs://, azblob://)", u)
	}
	return u, nil
}

// isMemURL reports whether u names the in-memory store.
func isMemURL(u string) bool {
	scheme, _, ok := strings.Cut(u, "://")
	return ok && strings.EqualFold(scheme, "mem")
}

// openStore opens the store root.
func (g *globals) openStore(ctx context.Context) (store.Store, error) {
	u, err := g.resolvedStoreURL()
	if err != nil {
		return nil, err
	}
	return store.Open(ctx, u)
}

// config resolves the layered configuration and prints warnings.
func (g *globals) config() (config.Config, error) {
	file := g.configFile
	if file == "" {
		file, _ = g.env.LookupEnv("ARIADNE_CONFIG")
	}
	c, warns, err := config.Resolve(config.Sources{File: file, Env: g.env.LookupEnv, Set: g.set})
	for _, w := range warns {
		g.notice("warning", fmt.Sprint(w))
	}
	return c, err
}

// emit prints v as JSON with --json, else calls human.
func (g *globals) emit(v any, human func(w io.Writer)) error {
	if g.jsonOut {
		enc := json.NewEncoder(g.env.Stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	human(g.env.Stdout)
	return nil
}

// printError reports an error: with --json only an object {"error",
// "kind"} on stdout, so programs branch on the kind and read one document
// (the error is not repeated as text on stderr); else a line on stderr.
func (g *globals) printError(err error) {
	if errors.As(err, new(reportedError)) {
		return
	}
	if g.jsonOut {
		enc := json.NewEncoder(g.env.Stdout)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(map[string]string{"error": err.Error(), "kind": errorKind(err)})
		return
	}
	fmt.Fprintln(g.env.Stderr, "ariadne:", err)
}

// reportedError is an error the command already wrote into its JSON
// answer (a lookup that failed after streaming rows): the exit code is
// still 1, nothing more is printed.
type reportedError struct{ err error }

func (e reportedError) Error() string { return e.err.Error() }
func (e reportedError) Unwrap() error { return e.err }

// errorKind names the kind of err for --json output, so programs branch on
// a stable word instead of message text: an aerr kind, else the sentinel of
// the package that reported it, else "error".
func errorKind(err error) string {
	var ue *usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return "usage"
	}
	return ariadne.ErrorKind(err)
}

// withFaceIndex opens the store through the library face, runs fn on the
// index name, and closes the store.
func (g *globals) withFaceIndex(ctx context.Context, name string, fn func(ix *ariadne.Index) error) error {
	ix, done, err := g.faceIndex(ctx, name)
	if err != nil {
		return err
	}
	defer done()
	return fn(ix)
}

// faceIndex opens the store through the library face and returns the
// index name and a function that closes the store. Commands that run the
// file index's own operations (update, compact, ...) use it for the row
// index part.
func (g *globals) faceIndex(ctx context.Context, name string) (*ariadne.Index, func(), error) {
	cfg, err := g.config()
	if err != nil {
		return nil, nil, err
	}
	st, err := g.faceStoreWith(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	ix, err := st.Index(ctx, name)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return ix, func() { st.Close() }, nil
}

// faceStore opens the store through the library face; the caller closes it.
func (g *globals) faceStore(ctx context.Context) (*ariadne.Store, error) {
	cfg, err := g.config()
	if err != nil {
		return nil, err
	}
	return g.faceStoreWith(ctx, cfg)
}

func (g *globals) faceStoreWith(ctx context.Context, cfg config.Config) (*ariadne.Store, error) {
	u, err := g.resolvedStoreURL()
	if err != nil {
		return nil, err
	}
	return ariadne.Open(ctx, u, ariadne.WithConfig(cfg))
}
