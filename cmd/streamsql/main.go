package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/streamsql/streamsql/server"
	"github.com/streamsql/streamsql/session"
)

// version is the version `streamsql version` prints.
const version = "0.1.0-dev"

// defaultDataDir is where the catalog and table data live unless
// --data-dir says otherwise.
const defaultDataDir = "./streamsql-data"

func main() {
	boundMallocArenas()
	os.Exit(run(os.Args[1:]))
}

// run dispatches on the first argument: a subcommand, or the flags of the
// shell and of -f. It returns the exit code.
func run(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "test":
			return runTest(args[1:])
		case "version":
			fmt.Printf("streamsql %s\n", version)
			return 0
		case "help":
			usage(os.Stdout, newRootFlags(new(rootOptions)))
			return 0
		case "kafka-dev":
			return runKafkaDev(args[1:])
		case "server":
			return runServer(args[1:])
		case "bench":
			return runBench(args[1:])
		}
	}
	return runRoot(args)
}

// rootOptions are the flags of the shell and of -f.
type rootOptions struct {
	dataDir string
	file    string
	dmlSync bool
	fresh   bool
	// allowOlder lets -s restore a savepoint older than the job folder's
	// newest checkpoint (--allow-older-restore).
	allowOlder bool
	restore    string
	savepoint  bool
	// serverURL sends the statements to a streamsql server (--server);
	// wait makes -f wait for the jobs it submitted there to end.
	serverURL string
	wait      bool
	// tokenFile and tlsCA are --server's token and CA (--token-file,
	// --tls-ca).
	tokenFile, tlsCA string
	// progress shows the jobs' progress while -f waits for them
	// (--progress, the default; --no-progress turns it off).
	progress, noProgress bool
	// cpuProfile is where the run's CPU profile goes (--cpuprofile).
	cpuProfile string
	// config is the configuration file (--config; "": the data dir's
	// config.yaml when it exists).
	config string
}

func newRootFlags(o *rootOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("streamsql", flag.ContinueOnError)
	fs.StringVar(&o.dataDir, "data-dir", defaultDataDir, "the data directory: catalog, table data, job state")
	fs.StringVar(&o.config, "config", "", "the configuration `FILE` (Flink's config.yaml layout: docs/OPTIONS.md): the session's options until SET; default: DIR/"+session.ConfigFileName+" of --data-dir when it exists")
	fs.StringVar(&o.file, "f", "", "run the statements of `FILE` instead of the shell")
	fs.StringVar(&o.file, "file", "", "same as -f")
	fs.BoolVar(&o.dmlSync, "sync", false, "make INSERT wait for its job to finish (SET 'table.dml-sync' = 'true')")
	fs.BoolVar(&o.fresh, "fresh", false, "discard the checkpoints of the jobs submitted instead of resuming from them")
	fs.StringVar(&o.restore, "s", "", "restore the first job submitted from the checkpoint or savepoint at `PATH` (later jobs start on their own; SET 'execution.state-recovery.path' applies to every job until RESET)")
	fs.BoolVar(&o.allowOlder, "allow-older-restore", false, "let -s restore a checkpoint or savepoint older than a checkpoint in the job's folder (refused by default: the output between the two would be written again; --fresh discards the folder's checkpoints instead)")
	fs.BoolVar(&o.savepoint, "savepoint-on-stop", false, "on SIGINT/SIGTERM, stop jobs with a savepoint (SET '"+session.OptSavepointOnStop+"' = 'true')")
	fs.StringVar(&o.serverURL, "server", "", "run the statements on the streamsql server at `URL`: -f submits a file, else a shell reads statements from stdin")
	fs.BoolVar(&o.wait, "wait", false, "with --server and -f: wait for the submitted jobs to end")
	fs.StringVar(&o.tokenFile, "token-file", "", "with --server: send the server the token in `FILE` (its first line); default: the environment variable "+server.TokenEnv+" if set")
	fs.StringVar(&o.tlsCA, "tls-ca", "", "with --server https://...: trust the CA certificates (PEM) in `FILE` besides the system's")
	fs.BoolVar(&o.progress, "progress", true, "with -f: show the jobs' progress while waiting for them: every 2s on a terminal, else a line every 10s")
	fs.BoolVar(&o.noProgress, "no-progress", false, "with -f: no progress line (--progress=false)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof reads it)")
	fs.Usage = func() { usage(fs.Output(), fs) }
	return fs
}

// usage prints how to call streamsql.
func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `usage:
  streamsql [--data-dir DIR] [--config FILE] [--sync]
                                                    the interactive shell
  streamsql [--data-dir DIR] [--config FILE] [--sync] -f FILE.sql
                                                    run a file of statements, then wait for its jobs
  streamsql test [--data-dir DIR] [-v] [--timeout D] PATH...
                                                    run sqllogictest files
  streamsql server [--data-dir DIR] [--config FILE] [--http ADDR] [--token-file FILE] [--tls-cert FILE --tls-key FILE]
                   [--allowed-paths DIR|s3://bucket/prefix,...] [--pprof] [--savepoint-on-stop] [--log-format text|json]
                                                    run jobs behind a REST API (docs/API.md)
  streamsql --server URL [--token-file FILE] [--tls-ca FILE] [-s PATH] -f FILE.sql [--wait]
                                                    submit a file's statements to a server
  streamsql --server URL [-s PATH]                  a shell on a server (statements from stdin)
  streamsql bench nexmark [--queries q0,q1,...] [--events N] [--parallelism P] [--json FILE] [--flink]
                                                    run the Nexmark benchmark (bench/nexmark/README.md)
  streamsql bench groupby [--keys K,...] [--rows R] [--backend pebble,hashmap] [--flink]
                                                    a group-by over many keys per state backend (bench/README.md)
  streamsql bench soak (--query qN [--events N] | --groupby [--keys K] [--rows R]) [--duration D] [--interval I] [--out FILE]
                                                    one workload for a long run, RSS and throughput sampled
  streamsql kafka-dev [--port 9092] [--partitions N] [--classic-txn] [--topic T]...
                                                    a local Kafka-compatible broker in memory, for trying
                                                    things out and for tests (not for production)
  streamsql version                                 print the version

The data directory (--data-dir, default ./streamsql-data) has one owner at a
time: the shell and -f lock it (DIR/LOCK) until they exit, and a second
streamsql on it exits with an error naming the owner's pid. "test" runs each
file in a new temporary directory of its own (under --data-dir if given) and
never uses DIR itself; version, help and kafka-dev use no data directory.

The shell, -f and server read their options from --config FILE, else from
DIR/config.yaml when it exists (Flink's config.yaml: flat keys such as
"execution.checkpointing.interval: 10 s" or nested maps); SET overrides
them for the session and RESET returns to them. An unknown key or a bad
value stops the start with an error naming the file and line.

flags:
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// runRoot runs the shell, or the file of -f.
func runRoot(args []string) int {
	var o rootOptions
	fs := newRootFlags(&o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "[ERROR] unexpected argument %q (see streamsql -h)\n", fs.Arg(0))
		return 2
	}
	if o.serverURL != "" {
		// The server owns its data dir and options: a flag of the local
		// session would be silently ignored there.
		var local []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "data-dir", "config", "sync", "fresh", "allow-older-restore", "savepoint-on-stop", "progress", "no-progress", "cpuprofile":
				local = append(local, "--"+f.Name)
			}
		})
		if len(local) > 0 {
			fmt.Fprintf(os.Stderr, "[ERROR] %s cannot be used with --server (the server has its own data dir and options)\n", strings.Join(local, ", "))
			return 2
		}
		c, err := newRemoteClient(o.tokenFile, o.tlsCA)
		if err != nil {
			fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
			return 2
		}
		remoteClient = c
		if o.file == "" {
			return runRemoteShell(o.serverURL, o.restore)
		}
		return runRemoteFile(o.serverURL, o.file, o.wait, o.restore)
	}
	if o.wait {
		fmt.Fprintln(os.Stderr, "[ERROR] --wait is for --server (without it, -f always waits)")
		return 2
	}
	if o.tokenFile != "" || o.tlsCA != "" {
		fmt.Fprintln(os.Stderr, "[ERROR] --token-file and --tls-ca are for --server")
		return 2
	}
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(o.cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
			return 1
		}
		defer stop()
	}
	sess, err := session.Open(o.dataDir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	defer sess.Close()
	// The file first: the flags below are SETs, which override it.
	if _, err := sess.ReadConfig(o.config); err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	sess.Fresh = o.fresh
	sess.RestoreNext = o.restore
	sess.AllowOlderRestore = o.allowOlder
	var sets []string
	if o.dmlSync {
		sets = append(sets, "SET '"+session.OptDMLSync+"' = 'true';")
	}
	if o.savepoint {
		sets = append(sets, "SET '"+session.OptSavepointOnStop+"' = 'true';")
	}
	for _, s := range sets {
		if _, err := sess.Execute(context.Background(), s); err != nil {
			fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
			return 1
		}
	}
	if o.file != "" {
		return runFile(sess, o.file, o.progress && !o.noProgress)
	}
	return runShell(sess)
}

// startCPUProfile starts writing a CPU profile to path; stop ends it.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
