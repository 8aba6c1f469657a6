package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/chzyer/readline"

	"github.com/streamsql/streamsql/connectors/print"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
)

// Prompts of the interactive shell.
const (
	prompt             = "streamsql> "
	continuationPrompt = "       -> "
)

// maxLine is the longest input line the shell reads from a pipe.
const maxLine = 64 << 20

// historyName is the shell's history file, in the data directory.
const historyName = ".streamsql_history"

const helpText = `Statements (end each with ';'; a statement may span several lines):
  CREATE TABLE t (id BIGINT, name STRING);                    a memory table
  CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen');  a connector table
  CREATE TABLE s (id BIGINT) WITH ('connector' = 'print');    a sink
  CREATE [TEMPORARY] VIEW v AS SELECT id FROM t WHERE id > 1;
  DROP TABLE [IF EXISTS] t;   DROP VIEW v;
  INSERT INTO t VALUES (1, 'a'), (2, 'b');
  INSERT INTO s SELECT id FROM g;                             starts a job
  EXECUTE STATEMENT SET BEGIN INSERT INTO ...; INSERT INTO ...; END;
  SELECT name, COUNT(*) FROM t GROUP BY name;
  EXPLAIN SELECT name, COUNT(*) FROM t GROUP BY name;
  SHOW TABLES [LIKE 'c%'];   SHOW VIEWS;   SHOW COLUMNS FROM t;
  SHOW CREATE TABLE t;   SHOW CREATE VIEW v;                  the statement that creates it
  SHOW FUNCTIONS [LIKE 'to\_%'];
  SHOW CATALOGS;   SHOW DATABASES;   SHOW CURRENT CATALOG;   SHOW CURRENT DATABASE;
  USE default_database;   USE CATALOG default_catalog;        the only ones there are
  DESCRIBE t;
  SHOW JOBS;   DESCRIBE JOB '<job id>';                       every figure of one job
  STOP JOB '<job id>' [WITH SAVEPOINT [FORMAT NATIVE]];       savepoints are CANONICAL unless NATIVE
  SET 'sql-client.execution.result-mode' = 'tableau';         table, tableau or changelog
  SET 'table.dml-sync' = 'true';                              INSERT waits for its job
  SET;   RESET 'key';   RESET;                               options and their source: default, config file or SET
Shell commands (on a line of their own):
  help, \h      this help
  quit, exit    leave the shell (also Ctrl-D, \q)
  \d            list the tables and views (SHOW TABLES)
  \d t          describe table or view t (DESCRIBE t)
  \timing       print how long each statement took (\timing off stops it)
The rows of a 'print' table's sink are written to the terminal above the prompt,
which is drawn again under them with what was being typed.
Ctrl-C clears the line being typed, or cancels the running query.
`

// shell is the interactive loop: it reads statements, runs them on the
// session and prints their results.
type shell struct {
	sess   *session.Session
	out    io.Writer
	errOut io.Writer
	// disp is where query results go; disp.terminal enables redrawing.
	disp display

	// failed is set once a statement has failed.
	failed bool
	// timing makes each statement print how long it took (\timing).
	timing bool

	mu     sync.Mutex
	cancel context.CancelFunc // of the running statement, if any
}

// lineReader reads the shell's input a line at a time.
type lineReader interface {
	// readLine returns the next line, errInterrupted when the user pressed
	// Ctrl-C while typing, or io.EOF at the end.
	readLine(prompt string) (string, error)
	// remember adds a complete statement to the history.
	remember(stmt string)
	close()
}

var errInterrupted = errors.New("interrupted")

// runShell runs the shell on stdin until quit or the end of input and
// returns the exit code.
//
// On a terminal it uses readline (history, completion, editing) and exits
// 0. On a pipe it reads lines quietly, without prompts, so a script can be
// piped in; at the end of input it waits for the jobs the script started,
// as -f does, and exits 1 if a statement or a job failed.
func runShell(sess *session.Session) int {
	sh := &shell{sess: sess, out: os.Stdout, errOut: os.Stderr, disp: stdoutDisplay()}
	interactive := isTerminal(os.Stdin) && isTerminal(os.Stdout)
	var in lineReader
	if interactive {
		rl, err := newReadline(sess)
		if err != nil {
			fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
			return 1
		}
		// Rows printed by print sinks of background jobs must not garble
		// the line being typed.
		restore := print.SetOutput(rl.Stdout(), rl.Stderr())
		defer restore()
		in = &readlineReader{rl: rl}
		fmt.Fprintf(sh.out, "streamsql %s. Type 'help' for help, 'quit' to exit.\n\n", version)
	} else {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, maxLine)
		in = &plainReader{sc: sc}
	}
	defer in.close()

	stopSignals := sh.handleSignals(in, interactive)
	sh.loop(in)
	stopSignals()
	if interactive {
		sh.stopJobs()
		return 0
	}
	f := &fileRun{path: "<stdin>", sess: sess, out: sh.out, errOut: sh.errOut}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.waitJobs(ctx) != 0 || sh.failed {
		return 1
	}
	return 0
}

// handleSignals makes SIGINT (Ctrl-C while a statement runs, when the
// terminal is not in readline's raw mode) cancel the running statement,
// and SIGTERM end the shell (see terminate). On a pipe, SIGINT with no
// statement running ends the shell too. It returns a function that undoes
// it.
func (sh *shell) handleSignals(in lineReader, interactive bool) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				if sig == syscall.SIGTERM || (!sh.interrupt() && !interactive) {
					sh.terminate(in, interactive)
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// terminate ends the shell on request: it cancels the running statement
// and, on a terminal, closes readline, which gives the terminal back and
// ends the loop as Ctrl-D does. On a pipe, whose read cannot be
// interrupted, it stops the jobs and exits with status 0 itself.
func (sh *shell) terminate(in lineReader, interactive bool) {
	sh.interrupt()
	if interactive {
		in.close()
		return
	}
	sh.stopJobs()
	os.Exit(0)
}

// stopJobs stops the jobs started from the shell.
func (sh *shell) stopJobs() {
	if n := running(sh.sess.Jobs()); n > 0 {
		fmt.Fprintf(sh.errOut, "[INFO] Stopping %d running jobs...\n", n)
	}
	sh.sess.StopJobs()
}

// newReadline sets up readline with the shell's prompt, history file and
// completion.
func newReadline(sess *session.Session) (*readline.Instance, error) {
	return readline.NewEx(&readline.Config{
		Prompt:                 prompt,
		HistoryFile:            historyPath(sess.DataDir()),
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		AutoComplete: completer{names: func() []string {
			cat := sess.Catalog()
			return append(cat.Tables(), cat.Views()...)
		}},
		InterruptPrompt: "^C",
		EOFPrompt:       "exit",
	})
}

// historyPath is <dataDir>/.streamsql_history, or ~/.streamsql_history when
// there is no usable data directory.
func historyPath(dataDir string) string {
	if dataDir != "" {
		if err := os.MkdirAll(dataDir, 0o755); err == nil {
			return filepath.Join(dataDir, historyName)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, historyName)
	}
	return ""
}

// loop reads and runs statements until quit or the end of input.
func (sh *shell) loop(in lineReader) {
	var acc accumulator
	for {
		p := prompt
		if !acc.empty() {
			p = continuationPrompt
		}
		l, err := in.readLine(p)
		if errors.Is(err, errInterrupted) {
			acc.reset()
			continue
		}
		if err != nil {
			return
		}
		if acc.empty() {
			cmd, arg := parseShellCommand(l)
			switch cmd {
			case cmdQuit:
				return
			case cmdHelp:
				fmt.Fprint(sh.out, helpText)
				continue
			case cmdNone:
			default:
				in.remember(strings.TrimSpace(l))
				sh.command(cmd, arg)
				continue
			}
		}
		text, ok := acc.add(l)
		if !ok {
			continue
		}
		in.remember(text)
		sh.run(text)
	}
}

// run parses and runs the statements of text, stopping at the first error.
// A parse error runs nothing. With \timing on, each statement that ran is
// followed by how long it took.
func (sh *shell) run(text string) {
	stmts, err := sql.Parse(text)
	if err != nil {
		sh.printError(err)
		return
	}
	for _, st := range stmts {
		start := time.Now()
		err := sh.runStatement(st)
		if sh.timing {
			fmt.Fprintf(sh.out, "Time: %.3f ms\n", float64(time.Since(start).Microseconds())/1000)
		}
		if err != nil {
			sh.printError(err)
			return
		}
	}
}

// runStatement runs one statement, which Ctrl-C cancels. A canceled query
// is not an error.
func (sh *shell) runStatement(st sql.Statement) error {
	ctx, cancel := context.WithCancel(context.Background())
	sh.mu.Lock()
	sh.cancel = cancel
	sh.mu.Unlock()
	defer func() {
		sh.mu.Lock()
		sh.cancel = nil
		sh.mu.Unlock()
		cancel()
	}()
	if sel, ok := st.(*sql.Select); ok {
		err := runQuery(ctx, sh.sess, sel, sh.disp)
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	r, err := sh.sess.ExecuteStatement(ctx, st)
	if err != nil {
		if ctx.Err() != nil {
			return errors.New("statement canceled")
		}
		return err
	}
	printResult(sh.out, r)
	return nil
}

// interrupt cancels the running statement (Ctrl-C while it runs). It
// reports whether there was one.
func (sh *shell) interrupt() bool {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.cancel == nil {
		return false
	}
	sh.cancel()
	return true
}

func (sh *shell) printError(err error) {
	sh.failed = true
	fmt.Fprintf(sh.errOut, "[ERROR] %v\n", err)
}

// Shell commands, recognized on a line of their own outside a statement.
const (
	cmdNone = iota
	cmdHelp
	cmdQuit
	cmdDescribe // \d [name]
	cmdTiming   // \timing [on|off]
	cmdUnknown  // any other line that starts with '\'
)

// shellCommand says which shell command line is, if any.
func shellCommand(line string) int {
	cmd, _ := parseShellCommand(line)
	return cmd
}

// parseShellCommand says which shell command line is, if any, and its
// argument. A trailing ';' and the case of the command do not matter; a
// line that starts with '\' is always a shell command (cmdUnknown when
// none of them), never the start of a statement.
func parseShellCommand(line string) (cmd int, arg string) {
	l := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), ";"))
	switch strings.ToLower(l) {
	case "help", `\h`, `\?`, "?":
		return cmdHelp, ""
	case "quit", "exit", `\q`:
		return cmdQuit, ""
	}
	if !strings.HasPrefix(l, `\`) {
		return cmdNone, ""
	}
	name, arg, _ := strings.Cut(l, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case `\d`:
		return cmdDescribe, arg
	case `\timing`:
		return cmdTiming, strings.ToLower(arg)
	}
	return cmdUnknown, name
}

// command runs a shell command other than help and quit.
func (sh *shell) command(cmd int, arg string) {
	switch cmd {
	case cmdDescribe:
		if arg == "" {
			sh.run("SHOW TABLES")
			return
		}
		sh.run("DESCRIBE " + arg)
	case cmdTiming:
		switch arg {
		case "":
			sh.timing = !sh.timing
		case "on":
			sh.timing = true
		case "off":
			sh.timing = false
		default:
			sh.printError(fmt.Errorf("\\timing takes on or off, not '%s'", arg))
			return
		}
		if sh.timing {
			fmt.Fprintln(sh.out, "Timing is on.")
		} else {
			fmt.Fprintln(sh.out, "Timing is off.")
		}
	case cmdUnknown:
		sh.printError(fmt.Errorf("unknown shell command '%s': the shell knows \\h, \\q, \\d [table] and \\timing [on|off] ('help' lists them)", arg))
	}
}

// accumulator gathers input lines until they hold complete statements
// (sql.Complete: the text ends with ';' outside strings, comments and
// statement sets).
type accumulator struct {
	lines []string
}

// add adds a line. When the text gathered so far is complete it returns it
// and starts over. Input holding nothing but blanks and comments is
// dropped, so such lines never leave the shell waiting for more.
func (a *accumulator) add(line string) (string, bool) {
	a.lines = append(a.lines, line)
	text := strings.Join(a.lines, "\n")
	if sql.Complete(text) {
		a.reset()
		return text, true
	}
	if stmts, err := sql.Parse(text); err == nil && len(stmts) == 0 {
		a.reset()
	}
	return "", false
}

func (a *accumulator) empty() bool { return len(a.lines) == 0 }
func (a *accumulator) reset()      { a.lines = nil }

// readlineReader reads lines from a terminal with readline.
type readlineReader struct {
	rl *readline.Instance
}

func (r *readlineReader) readLine(p string) (string, error) {
	r.rl.SetPrompt(p)
	l, err := r.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", errInterrupted
	}
	return l, err
}

// remember saves stmt to the history as one line.
func (r *readlineReader) remember(stmt string) {
	r.rl.SaveHistory(strings.ReplaceAll(stmt, "\n", " "))
}

func (r *readlineReader) close() { r.rl.Close() }

// plainReader reads lines from a pipe or file, without prompts.
type plainReader struct {
	sc *bufio.Scanner
}

func (r *plainReader) readLine(string) (string, error) {
	if r.sc.Scan() {
		return r.sc.Text(), nil
	}
	if err := r.sc.Err(); err != nil {
		return "", err
	}
	return "", io.EOF
}

func (r *plainReader) remember(string) {}
func (r *plainReader) close()          {}
