package cli

import (
	"io"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/ariadne-go/ariadne"
	"github.com/ariadne-go/ariadne/mcpserver"
)

func newMCPCmd(g *globals) *cobra.Command {
	var lim mcpserver.Limits
	var warm bool
	cmd := &cobra.Command{
		Use:   "mcp [--max-rows N] [--max-keys N]",
		Short: "Serve the store's indexes to an AI agent: a Model Context Protocol server over stdio",
		Long: "Speak the Model Context Protocol on stdin/stdout (an agent host starts `ariadne mcp --store URL`). Tools:\n" +
			"list_indexes, describe_index, lookup (a page of rows with a cursor), locate, join. The same tools are served\n" +
			"over HTTP at /mcp by `ariadne serve`. See docs/serving.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkEngines(lim.JoinEngines); err != nil {
				return err
			}
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
			st, err := ariadne.Open(ctx, u, ariadne.WithConfig(conf))
			if err != nil {
				return err
			}
			defer st.Close()
			if warm {
				if _, err := st.Warm(ctx); err != nil {
					return err
				}
			}
			tr := &mcp.IOTransport{Reader: io.NopCloser(g.env.Stdin), Writer: nopWriteCloser{g.env.Stdout}}
			err = mcpserver.New(st, lim).Run(ctx, tr)
			if ctx.Err() != nil {
				return nil // stopped by a signal
			}
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&lim.MaxRows, "max-rows", 100, "most rows in a lookup page or a join answer")
	f.IntVar(&lim.MaxKeys, "max-keys", 1000, "most keys in a lookup batch, a locate or a join")
	f.StringSliceVar(&lim.JoinEngines, "join-engines", []string{"duckdb"}, "engines a join call may name (duckdb, spark; Spark at the config's sparkRemote)")
	f.BoolVar(&warm, "warm", false, "load every row index's caches before answering")
	return cmd
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
