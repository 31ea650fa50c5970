package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/server"
)

func newServeCmd(g *globals) *cobra.Command {
	d := server.DefaultConfig()
	var listen, tokenFile, tokenEnv, tlsCert, tlsKey, logFormat string
	var sqlOpts ariadne.SQLOptions
	cfg := d
	cmd := &cobra.Command{
		Use:   "serve [--listen 127.0.0.1:8080]",
		Short: "Serve the store's indexes over HTTP/JSON (read-only): lookup, locate, describe, metrics",
		Long: "Serve the store's indexes over HTTP/JSON (see docs/serving.md): POST /v1/indexes/NAME/lookup and /locate,\n" +
			"GET /v1/indexes, /healthz, /readyz, /metrics, /openapi.json. The server warms the row indexes, then answers\n" +
			"/readyz with 200; it polls the store for newer index versions; SIGTERM or SIGINT drain requests in flight.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (tlsCert == "") != (tlsKey == "") {
				return usagef("serve: give both --tls-cert and --tls-key, or neither")
			}
			if err := checkEngines(cfg.JoinEngines); err != nil {
				return err
			}
			tokens, err := readTokens(g, tokenFile, tokenEnv)
			if err != nil {
				return err
			}
			cfg.Tokens = tokens
			var h slog.Handler = slog.NewTextHandler(g.env.Stderr, nil)
			if logFormat == "json" || g.jsonOut {
				h = newEventLogHandler(g.env.Stderr)
			}
			cfg.Logger = slog.New(h)
			conf, err := g.config()
			if err != nil {
				return err
			}
			u, err := g.resolvedStoreURL()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			st, err := ariadne.Open(ctx, u, ariadne.WithConfig(conf), ariadne.WithWarmOnRefresh(true), ariadne.WithSQLOptions(sqlOpts))
			if err != nil {
				return err
			}
			defer st.Close()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			if host, _, _ := net.SplitHostPort(listen); !isLoopback(host) && len(tokens) == 0 {
				cfg.Logger.Warn("listening beyond loopback without a bearer token", "listen", listen)
			}
			return server.New(st, cfg).Serve(ctx, ln, tlsCert, tlsKey)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8080", "address to listen on (loopback by default)")
	f.DurationVar(&cfg.PollInterval, "poll", d.PollInterval, "how often to pick up newer index versions from the store (negative: never)")
	f.DurationVar(&cfg.WarmTimeout, "warm-timeout", d.WarmTimeout, "bound of the warm-up before /readyz answers 200")
	f.IntVar(&cfg.MaxKeys, "max-keys", d.MaxKeys, "most keys in a lookup batch or a locate")
	f.IntVar(&cfg.MaxJoinKeys, "max-join-keys", d.MaxJoinKeys, "most key rows a join may post")
	f.StringSliceVar(&cfg.JoinEngines, "join-engines", []string{"duckdb"}, "engines a join request may name (duckdb, spark; Spark at the config's sparkRemote)")
	f.IntVar(&cfg.MaxJoins, "max-joins", d.MaxJoins, "most joins run at once (more wait for a turn until their deadline)")
	f.Int64Var(&cfg.MaxBodyBytes, "max-body", d.MaxBodyBytes, "largest request body in bytes")
	f.DurationVar(&cfg.RequestTimeout, "timeout", d.RequestTimeout, "deadline of each request")
	f.IntVar(&cfg.MaxRows, "max-rows", d.MaxRows, "most rows in a lookup page (larger limits are cut; the cursor continues)")
	f.IntVar(&cfg.MCPMaxRows, "mcp-max-rows", d.MCPMaxRows, "most rows in an MCP tool answer at /mcp (lookup pages, joins)")
	f.Int64Var(&cfg.MemorySlack, "memory-slack", 256<<20, "bound the Go heap to the row indexes' cache budget plus this many bytes (soft, after the warm-up; 0: no bound; GOMEMLIMIT wins)")
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", d.ShutdownTimeout, "how long to drain requests in flight on SIGTERM/SIGINT")
	f.StringVar(&tokenFile, "token-file", "", "file of accepted bearer tokens, one per line")
	f.StringVar(&tokenEnv, "token-env", "", "environment variable holding accepted bearer tokens (comma-separated)")
	f.StringVar(&tlsCert, "tls-cert", "", "TLS certificate file (PEM); with --tls-key, serve HTTPS")
	f.StringVar(&tlsKey, "tls-key", "", "TLS private key file (PEM)")
	f.StringVar(&logFormat, "log-format", "text", "log format: text or json (JSON lines {\"event\":\"log\",...}, as with --json)")
	f.StringVar(&sqlOpts.MemoryLimit, "sql-memory", ariadne.DefaultSQLMemory, "memory of the database running lookups' \"sql\" (all queries together; past it a query fails)")
	f.IntVar(&sqlOpts.Conns, "sql-conns", 2, "most lookup \"sql\" queries running at once (more wait)")
	f.Int64Var(&sqlOpts.MaxInputRows, "sql-max-input-rows", ariadne.DefaultSQLInputRows, "most rows a lookup \"sql\" loads (a key with more is refused)")
	return cmd
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readTokens collects the bearer tokens of --token-file and --token-env.
func readTokens(g *globals, file, env string) ([]string, error) {
	var raw []string
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("serve: --token-file: %w", err)
		}
		raw = append(raw, strings.Split(string(b), "\n")...)
	}
	if env != "" {
		v, ok := g.env.LookupEnv(env)
		if !ok || v == "" {
			return nil, usagef("serve: --token-env %s: the variable is not set", env)
		}
		raw = append(raw, strings.Split(v, ",")...)
	}
	var out []string
	for _, t := range raw {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	if (file != "" || env != "") && len(out) == 0 {
		return nil, errors.New("serve: no bearer token in --token-file/--token-env")
	}
	return out, nil
}

// checkEngines refuses --join-engines naming an engine that does not exist.
func checkEngines(names []string) error {
	for _, e := range names {
		if e != ariadne.EngineDuckDB && e != ariadne.EngineSpark {
			return usagef("--join-engines: unknown engine %q (want %s or %s)", e, ariadne.EngineDuckDB, ariadne.EngineSpark)
		}
	}
	return nil
}
