package slt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DB is the engine under test. Implementations are not required to be safe
// for concurrent use. If a DB also implements io.Closer, the runner closes
// it when its file is done.
type DB interface {
	// Exec runs a statement that returns no rows.
	Exec(ctx context.Context, sql string) error
	// Query runs a query and returns its rows, each value as the engine's
	// text (see Value). types holds the engine's column kinds, one byte per
	// column: 'I' integer, 'R' floating or decimal, 'T' text or other.
	Query(ctx context.Context, sql string) (types string, rows [][]Value, err error)
}

// Counter is an optional interface of a DB: ExecCount runs a statement
// and returns the number of rows it changed, which "statement count N"
// checks. With a DB that is no Counter, "statement count N" is "statement
// ok".
type Counter interface {
	ExecCount(ctx context.Context, sql string) (int64, error)
}

// Options configure a run.
type Options struct {
	// Engine is the name skipif and onlyif are compared with
	// (case-insensitively). Default "streamsql".
	Engine string
	// Verbose makes Run print each failure's detail.
	Verbose bool
	// Out is where Run writes its report. Default os.Stdout.
	Out io.Writer
	// NewDB returns a fresh engine for the file at path; each file runs on
	// its own DB.
	NewDB func(path string) (DB, error)
	// Timeout, if positive, bounds each statement, query and system command.
	Timeout time.Duration
	// Vars are the variables "control substitution on" replaces ($NAME or
	// ${NAME}) before the environment's; see substituteVars.
	Vars map[string]string
}

// DefaultEngine is the engine name used when Options.Engine is empty.
const DefaultEngine = "streamsql"

// FileResult is the outcome of one file. Statements, queries and system
// commands count as passed or failed; records not run (skipif/onlyif,
// after halt, unsupported directives) count as skipped.
type FileResult struct {
	Path                    string
	Passed, Failed, Skipped int
	Failures                []Failure
	// Skips lists why records were skipped for a reason other than
	// skipif/onlyif or halt (unsupported directives), as "path:line: reason".
	Skips []string
}

// Failure is one record that did not behave as the file expects.
type Failure struct {
	Path     string // file of the record (an included file, possibly)
	Line     int    // line of the record's directive
	SQL      string // the statement, query or command
	Message  string // what went wrong, in a few words
	Expected string // the expected result or error, if any
	Got      string // what the engine produced, if any
	Err      error  // the engine's error, if any
}

func (f Failure) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: %s", f.Path, f.Line, f.Message)
	if f.Err != nil {
		fmt.Fprintf(&b, ": %v", f.Err)
	}
	b.WriteByte('\n')
	if f.SQL != "" {
		b.WriteString(indent(f.SQL))
	}
	if f.Expected != "" || f.Got != "" {
		b.WriteString("  expected:\n")
		b.WriteString(indent(f.Expected))
		b.WriteString("  got:\n")
		b.WriteString(indent(f.Got))
	}
	return b.String()
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("    ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// Run runs the files (see RunFiles), writes the report to opt.Out (see
// Report) and returns whether any record failed.
func Run(ctx context.Context, paths []string, opt Options) (failed bool, err error) {
	res, err := RunFiles(ctx, paths, opt)
	out := opt.Out
	if out == nil {
		out = os.Stdout
	}
	failed = Report(out, res, opt.Verbose)
	return failed, err
}

// CollectFiles expands paths: a file is taken as is, a directory is walked
// for *.slt and *.test files (files ending in .slt.part are only ever
// included, never run on their own). The result keeps the order of paths,
// each directory's files in lexical order.
func CollectFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && isTestFile(d.Name()) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

func isTestFile(name string) bool {
	return strings.HasSuffix(name, ".slt") || strings.HasSuffix(name, ".test")
}

// RunFiles runs each test file (paths may name files or directories, see
// CollectFiles), each on a DB of its own from opt.NewDB. A file that cannot
// be read or parsed, or whose DB cannot be created, is reported as one
// failure in its result. The error is non-nil only when paths cannot be
// expanded or ctx ends; the results gathered so far are returned with it.
func RunFiles(ctx context.Context, paths []string, opt Options) ([]FileResult, error) {
	if opt.NewDB == nil {
		return nil, errors.New("slt: Options.NewDB is nil")
	}
	files, err := CollectFiles(paths)
	if err != nil {
		return nil, err
	}
	var results []FileResult
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		results = append(results, RunFile(ctx, f, opt))
	}
	return results, ctx.Err()
}

// RunFile runs one test file on a fresh DB from opt.NewDB.
func RunFile(ctx context.Context, path string, opt Options) FileResult {
	res := FileResult{Path: path}
	recs, err := parseFile(path)
	if err != nil {
		res.fail(failureFromError(path, err, "cannot parse file"))
		return res
	}
	db, err := opt.NewDB(path)
	if err != nil {
		res.fail(Failure{Path: path, Message: "cannot create DB", Err: err})
		return res
	}
	if c, ok := db.(io.Closer); ok {
		defer func() {
			if err := c.Close(); err != nil {
				res.fail(Failure{Path: path, Message: "closing DB", Err: err})
			}
		}()
	}
	r := &runner{
		opt:       opt,
		db:        db,
		res:       &res,
		labels:    map[string]labelResult{},
		including: map[string]bool{},
		dialect:   DialectOf(path),
	}
	if r.opt.Engine == "" {
		r.opt.Engine = DefaultEngine
	}
	defer func() {
		if r.testDir != "" {
			os.RemoveAll(r.testDir)
		}
	}()
	abs, _ := filepath.Abs(path)
	r.including[abs] = true
	r.runRecords(ctx, recs, nil)
	return res
}

func parseFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

func failureFromError(path string, err error, msg string) Failure {
	var pe *ParseError
	if errors.As(err, &pe) {
		return Failure{Path: pe.Path, Line: pe.Line, Message: "parse error: " + pe.Msg}
	}
	return Failure{Path: path, Message: msg, Err: err}
}

func (r *FileResult) fail(f Failure) {
	r.Failed++
	r.Failures = append(r.Failures, f)
}

type labelResult struct {
	hash string
	path string
	line int
}

type runner struct {
	opt       Options
	db        DB
	res       *FileResult
	halted    bool
	threshold int
	sortMode  SortMode
	labels    map[string]labelResult
	including map[string]bool // absolute paths of the files being run (recursion guard)
	// substitution is set by "control substitution on"; testDir is the
	// file's $__TEST_DIR__, made on first use.
	substitution bool
	testDir      string
	// dialect is the file's (DialectOf), for the files it includes too.
	dialect Dialect
}

// runRecords runs recs; vars holds loop variables to substitute.
func (r *runner) runRecords(ctx context.Context, recs []Record, vars map[string]string) {
	for i := range recs {
		rec := &recs[i]
		if r.halted || ctx.Err() != nil {
			r.res.Skipped += countRunnable(recs[i:])
			return
		}
		if !r.conditionsHold(rec) {
			if rec.Kind != KindHalt {
				r.res.Skipped += countRunnable(recs[i : i+1])
			}
			continue
		}
		r.runRecord(ctx, rec, vars)
	}
}

// countRunnable counts the records that would have counted as passed or
// failed.
func countRunnable(recs []Record) int {
	n := 0
	for _, rec := range recs {
		switch rec.Kind {
		case KindStatement, KindQuery, KindSystem, KindUnknown:
			n++
		case KindLoop:
			n += rec.LoopCount * countRunnable(rec.Body)
		}
	}
	return n
}

func (r *runner) conditionsHold(rec *Record) bool {
	for _, c := range rec.Conditions {
		if !c.Applies(r.opt.Engine) {
			return false
		}
	}
	return true
}

func (r *runner) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.opt.Timeout > 0 {
		return context.WithTimeout(ctx, r.opt.Timeout)
	}
	return ctx, func() {}
}

func (r *runner) runRecord(ctx context.Context, rec *Record, vars map[string]string) {
	switch rec.Kind {
	case KindHalt:
		r.halted = true
	case KindHashThreshold:
		r.threshold = rec.Threshold
	case KindControl:
		f := strings.Fields(rec.Arg)
		if len(f) >= 2 && f[0] == "sortmode" {
			r.sortMode, _ = parseSortMode(f[1])
		}
		if len(f) >= 2 && f[0] == "substitution" {
			r.substitution = f[1] == "on"
		}
		// resultmode only documents the layout; both are always accepted.
	case KindSleep:
		t := time.NewTimer(rec.Duration)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	case KindInclude:
		r.include(ctx, rec, vars)
	case KindLoop:
		for i := 0; i < rec.LoopCount && !r.halted && ctx.Err() == nil; i++ {
			inner := make(map[string]string, len(vars)+1)
			for k, v := range vars {
				inner[k] = v
			}
			inner[rec.LoopVar] = strconv.Itoa(rec.LoopStart + i)
			r.runRecords(ctx, rec.Body, inner)
		}
	case KindUnknown:
		r.res.Skipped++
		r.res.Skips = append(r.res.Skips, fmt.Sprintf("%s:%d: %s: %s", rec.Path, rec.Line, rec.Reason, rec.Arg))
	case KindStatement:
		r.record(r.statement(ctx, rec, r.substituteVars(substitute(rec.SQL, vars))))
	case KindQuery:
		r.record(r.query(ctx, rec, r.substituteVars(substitute(rec.SQL, vars))))
	case KindSystem:
		r.record(r.system(ctx, rec, r.substituteVars(substitute(rec.SQL, vars))))
	}
}

// varRef matches $NAME and ${NAME}.
var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// substituteVars does what "control substitution on" asks, as
// sqllogictest-rs: $NAME and ${NAME} become Options.Vars[NAME], else the
// environment variable NAME; $__TEST_DIR__ is a directory of the file's
// own, removed when the file ends. Names without a value are left as
// written. With substitution off s is returned as is.
func (r *runner) substituteVars(s string) string {
	if !r.substitution {
		return s
	}
	return varRef.ReplaceAllStringFunc(s, func(m string) string {
		name := strings.Trim(m, "${}")
		if name == "__TEST_DIR__" {
			if r.testDir == "" {
				d, err := os.MkdirTemp("", "slt-")
				if err != nil {
					return m
				}
				r.testDir = d
			}
			return r.testDir
		}
		if v, ok := r.opt.Vars[name]; ok {
			return v
		}
		if v, ok := os.LookupEnv(name); ok {
			return v
		}
		return m
	})
}

func (r *runner) record(f *Failure) {
	if f == nil {
		r.res.Passed++
		return
	}
	r.res.fail(*f)
}

// substitute replaces $var and ${var} for loop variables.
func substitute(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "${"+k+"}", v)
		s = regexp.MustCompile(`\$`+regexp.QuoteMeta(k)+`\b`).ReplaceAllLiteralString(s, v)
	}
	return s
}

func (r *runner) include(ctx context.Context, rec *Record, vars map[string]string) {
	pattern := substitute(rec.Arg, vars)
	if !filepath.IsAbs(pattern) {
		pattern = filepath.Join(filepath.Dir(rec.Path), pattern)
	}
	matches, err := filepath.Glob(pattern)
	if err == nil && len(matches) == 0 {
		err = fmt.Errorf("no file matches %q", pattern)
	}
	if err != nil {
		r.res.fail(Failure{Path: rec.Path, Line: rec.Line, Message: "include " + rec.Arg, Err: err})
		return
	}
	sort.Strings(matches)
	for _, m := range matches {
		abs, _ := filepath.Abs(m)
		if r.including[abs] {
			r.res.fail(Failure{Path: rec.Path, Line: rec.Line, Message: "include " + rec.Arg,
				Err: fmt.Errorf("%s includes itself", m)})
			continue
		}
		recs, err := parseFile(m)
		if err != nil {
			f := failureFromError(m, err, "cannot read included file")
			r.res.fail(f)
			continue
		}
		r.including[abs] = true
		r.runRecords(ctx, recs, vars)
		delete(r.including, abs)
		if r.halted || ctx.Err() != nil {
			return
		}
	}
}

// retry runs f up to 1+rec.Retry times, waiting rec.Backoff between tries,
// until it returns nil.
func (r *runner) retry(ctx context.Context, rec *Record, f func() *Failure) *Failure {
	var fail *Failure
	for i := 0; ; i++ {
		fail = f()
		if fail == nil || i >= rec.Retry || ctx.Err() != nil {
			return fail
		}
		t := time.NewTimer(rec.Backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fail
		case <-t.C:
		}
	}
}

func (r *runner) statement(ctx context.Context, rec *Record, sql string) *Failure {
	if isFlush(sql) && rec.Err == nil {
		// RisingWave's FLUSH waits until earlier writes are visible; engines
		// run here apply each statement before the next, so it passes
		// without reaching the engine.
		return nil
	}
	return r.retry(ctx, rec, func() *Failure {
		cctx, cancel := r.withTimeout(ctx)
		defer cancel()
		c, counts := r.db.(Counter)
		if rec.Count < 0 || !counts {
			return checkError(rec, sql, r.db.Exec(cctx, sql), "statement")
		}
		n, err := c.ExecCount(cctx, sql)
		if f := checkError(rec, sql, err, "statement"); f != nil || err != nil {
			return f
		}
		if n != rec.Count {
			return &Failure{Path: rec.Path, Line: rec.Line, SQL: sql,
				Message: fmt.Sprintf("statement changed %d rows, expected %d", n, rec.Count)}
		}
		return nil
	})
}

// isFlush reports whether sql is RisingWave's FLUSH statement.
func isFlush(sql string) bool {
	return strings.EqualFold(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(sql), ";")), "flush")
}

// checkError compares err with what rec expects. It returns nil when the
// outcome is as expected, and for a success that must be checked further
// (a query) it is the caller's business to go on when err is nil and
// rec.Err is nil.
func checkError(rec *Record, sql string, err error, what string) *Failure {
	base := Failure{Path: rec.Path, Line: rec.Line, SQL: sql}
	if rec.Err == nil {
		if err != nil {
			base.Message = what + " failed"
			base.Err = err
			return &base
		}
		return nil
	}
	if err == nil {
		base.Message = what + " succeeded, but an error was expected"
		base.Expected = rec.Err.describe()
		return &base
	}
	if !rec.Err.matches(err.Error()) {
		base.Message = what + " failed with the wrong error"
		base.Expected = rec.Err.describe()
		base.Got = err.Error()
		return &base
	}
	return nil
}

func (e *ExpectedError) describe() string {
	switch {
	case e.Message != "":
		return e.Message
	case e.Regex != "":
		return "error matching " + e.Regex
	}
	return "an error"
}

// matches reports whether an error message is the one expected.
func (e *ExpectedError) matches(msg string) bool {
	if e.Message != "" {
		return strings.TrimSpace(e.Message) == strings.TrimSpace(msg)
	}
	if e.Regex == "" {
		return true
	}
	re, err := regexp.Compile(e.Regex)
	if err != nil {
		// Not a valid regexp (in Go's syntax): match it as plain text.
		return strings.Contains(msg, e.Regex)
	}
	return re.MatchString(msg)
}

func (r *runner) query(ctx context.Context, rec *Record, sql string) *Failure {
	return r.retry(ctx, rec, func() *Failure {
		cctx, cancel := r.withTimeout(ctx)
		defer cancel()
		types, rows, err := r.db.Query(cctx, sql)
		if f := checkError(rec, sql, err, "query"); f != nil || rec.Err != nil {
			return f
		}
		mode := rec.Sort
		if mode == SortDefault {
			mode = r.sortMode
		}
		cmp := compareResult(rec, mode, types, rows, r.dialect)
		if !cmp.ok {
			msg := "query result mismatch"
			if cmp.note != "" {
				msg += " (" + cmp.note + ")"
			}
			return &Failure{Path: rec.Path, Line: rec.Line, SQL: sql, Message: msg,
				Expected: strings.Join(rec.Expected, "\n"), Got: cmp.got}
		}
		if rec.Label != "" {
			if prev, ok := r.labels[rec.Label]; ok && prev.hash != cmp.hash {
				return &Failure{Path: rec.Path, Line: rec.Line, SQL: sql,
					Message:  fmt.Sprintf("label %s: result differs from the query at %s:%d", rec.Label, prev.path, prev.line),
					Expected: "values hashing to " + prev.hash, Got: "values hashing to " + cmp.hash}
			} else if !ok {
				r.labels[rec.Label] = labelResult{hash: cmp.hash, path: rec.Path, line: rec.Line}
			}
		}
		return nil
	})
}

func (r *runner) system(ctx context.Context, rec *Record, command string) *Failure {
	return r.retry(ctx, rec, func() *Failure {
		cctx, cancel := r.withTimeout(ctx)
		defer cancel()
		cmd := exec.CommandContext(cctx, "sh", "-c", command)
		cmd.Dir = filepath.Dir(rec.Path)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			if s := strings.TrimSpace(stderr.String()); s != "" {
				err = fmt.Errorf("%w: %s", err, s)
			}
			return &Failure{Path: rec.Path, Line: rec.Line, SQL: command, Message: "system command failed", Err: err}
		}
		if rec.HasExpected {
			want := strings.TrimSpace(strings.Join(rec.Expected, "\n"))
			got := strings.TrimSpace(stdout.String())
			if want != got {
				return &Failure{Path: rec.Path, Line: rec.Line, SQL: command,
					Message: "system command output mismatch", Expected: want, Got: got}
			}
		}
		return nil
	})
}

// Report writes one line per file, "path: N passed, N failed, N skipped",
// then, when verbose, each failure and each unsupported directive, and last
// the totals, exactly "N passed, N failed". It returns whether any record
// failed.
func Report(w io.Writer, results []FileResult, verbose bool) (failed bool) {
	var passed, nfailed int
	for _, r := range results {
		fmt.Fprintf(w, "%s: %d passed, %d failed, %d skipped\n", r.Path, r.Passed, r.Failed, r.Skipped)
		if verbose {
			for _, f := range r.Failures {
				fmt.Fprint(w, indent(f.String()))
			}
			for _, s := range r.Skips {
				fmt.Fprintf(w, "    skipped %s\n", s)
			}
		}
		passed += r.Passed
		nfailed += r.Failed
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", passed, nfailed)
	return nfailed > 0
}
