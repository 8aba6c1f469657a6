package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/streamsql/streamsql/server"
)

// runServer is `streamsql server`: it runs until SIGINT or SIGTERM, then
// stops its jobs (with a savepoint each with --savepoint-on-stop, else with
// a final checkpoint), to be resumed by the next start.
func runServer(args []string) int {
	var o server.Options
	fs := flag.NewFlagSet("streamsql server", flag.ContinueOnError)
	fs.StringVar(&o.DataDir, "data-dir", defaultDataDir, "the data directory the server owns")
	fs.StringVar(&o.HTTPAddr, "http", "127.0.0.1:8081", "the `ADDR` (host:port) of the REST API and /metrics")
	fs.BoolVar(&o.SavepointOnStop, "savepoint-on-stop", false, "on SIGINT/SIGTERM, stop jobs with a savepoint (else with a final checkpoint)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "[ERROR] unexpected argument %q (see streamsql server -h)\n", fs.Arg(0))
		return 2
	}
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	srv, err := server.Open(o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve() }()
	select {
	case sig := <-sigc:
		fmt.Fprintf(os.Stderr, "[INFO] %v: stopping the jobs...\n", sig)
	case err := <-errc:
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	return 0
}
