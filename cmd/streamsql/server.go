package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/streamsql/streamsql/server"
)

// runServer is `streamsql server`: it runs until SIGINT or SIGTERM, then
// stops its jobs (with a savepoint each with --savepoint-on-stop, else with
// a final checkpoint), to be resumed by the next start. Its log goes to
// stderr, as text or JSON (--log-format).
func runServer(args []string) int {
	var o server.Options
	var format string
	fs := flag.NewFlagSet("streamsql server", flag.ContinueOnError)
	fs.StringVar(&o.DataDir, "data-dir", defaultDataDir, "the data directory the server owns")
	fs.StringVar(&o.ConfigFile, "config", "", "the configuration `FILE` (Flink's config.yaml layout: docs/OPTIONS.md) whose options are the base of every client's session; default: DIR/config.yaml of --data-dir when it exists")
	fs.StringVar(&o.HTTPAddr, "http", "127.0.0.1:8081", "the `ADDR` (host:port) of the REST API and /metrics")
	fs.BoolVar(&o.SavepointOnStop, "savepoint-on-stop", false, "on SIGINT/SIGTERM, stop jobs with a savepoint (else with a final checkpoint)")
	fs.StringVar(&format, "log-format", server.LogText, "the log's `FORMAT` on stderr: text or json (log/slog's)")
	var tokenFile string
	fs.StringVar(&tokenFile, "token-file", "", "require of every request but /healthz the token in `FILE` (its first line), as the header Authorization: Bearer TOKEN; default: the environment variable "+server.TokenEnv+" if set. Required when --http is not a loopback address")
	fs.StringVar(&o.TLSCert, "tls-cert", "", "serve HTTPS with the certificate (PEM) in `FILE`; needs --tls-key")
	fs.StringVar(&o.TLSKey, "tls-key", "", "the private key (PEM) in `FILE` of --tls-cert")
	var allowed string
	fs.StringVar(&allowed, "allowed-paths", "", "the directories and object store locations `DIR|s3://bucket/prefix[,...]` under which statements may read and write (a filesystem table's 'path', restore paths, the checkpoints and savepoints directories); default: the data directory, and no object store")
	fs.BoolVar(&o.Pprof, "pprof", false, "serve Go's profiles under /debug/pprof/ (off by default)")
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
	token, err := readToken(tokenFile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 2
	}
	o.Token = token
	if allowed != "" {
		for _, d := range strings.Split(allowed, ",") {
			if d = strings.TrimSpace(d); d != "" {
				o.AllowedPaths = append(o.AllowedPaths, d)
			}
		}
	}
	log, err := server.NewLogger(os.Stderr, format)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 2
	}
	// What the packages below print with the log package goes into the
	// same log, in the same format.
	slog.SetDefault(log)
	o.Logger = log
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	srv, err := server.Open(o)
	if err != nil {
		log.Error("server not started", "error", err.Error())
		return 1
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve() }()
	select {
	case sig := <-sigc:
		log.Info("stopping the jobs", "signal", sig.String())
	case err := <-errc:
		log.Error("serving the API failed", "error", err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Error("stopping the server failed", "error", err.Error())
		return 1
	}
	return 0
}

// readToken is the token of --token-file FILE (its first line, without
// surrounding spaces), or, without the flag, of the environment variable
// server.TokenEnv; "" when neither is given. An empty or unreadable file is
// an error.
func readToken(file string) (string, error) {
	if file == "" {
		return strings.TrimSpace(os.Getenv(server.TokenEnv)), nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	token, _, _ := strings.Cut(string(data), "\n")
	token = strings.TrimSpace(token)
	if token == "" {
		return "", fmt.Errorf("--token-file %s: the file's first line is empty", file)
	}
	return token, nil
}
