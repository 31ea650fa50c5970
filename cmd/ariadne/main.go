// Command ariadne is the command line of Ariadne, an index for the data lake.
// Run `ariadne help` for the commands; internal/cli implements them.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/ariadne-go/ariadne/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, LookupEnv: os.LookupEnv})
	stop()
	os.Exit(code)
}
