package slt

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Kind says what a Record is.
type Kind int

// The kinds of record.
const (
	KindStatement     Kind = iota // statement ok|error|count
	KindQuery                     // query <types> ... / query error
	KindHashThreshold             // hash-threshold N
	KindHalt                      // halt
	KindInclude                   // include <glob>
	KindSleep                     // sleep <duration>
	KindSystem                    // system ok <command>
	KindControl                   // control sortmode|resultmode|substitution <value>
	KindLoop                      // loop <var> <start> <count> ... endloop
	KindUnknown                   // a directive the runner does not support
)

var kindNames = [...]string{
	KindStatement:     "statement",
	KindQuery:         "query",
	KindHashThreshold: "hash-threshold",
	KindHalt:          "halt",
	KindInclude:       "include",
	KindSleep:         "sleep",
	KindSystem:        "system",
	KindControl:       "control",
	KindLoop:          "loop",
	KindUnknown:       "unknown",
}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// SortMode is how a query's result is ordered before it is compared.
type SortMode int

// The sort modes. SortDefault means the file's current default
// (set by "control sortmode", initially nosort).
const (
	SortDefault SortMode = iota
	NoSort
	RowSort
	ValueSort
)

func (m SortMode) String() string {
	switch m {
	case NoSort:
		return "nosort"
	case RowSort:
		return "rowsort"
	case ValueSort:
		return "valuesort"
	}
	return "default"
}

func parseSortMode(s string) (SortMode, bool) {
	switch s {
	case "nosort":
		return NoSort, true
	case "rowsort":
		return RowSort, true
	case "valuesort":
		return ValueSort, true
	}
	return SortDefault, false
}

// Condition is a skipif or onlyif line in front of a record.
type Condition struct {
	OnlyIf bool   // onlyif when true, skipif when false
	Engine string // the engine named
}

// Applies reports whether a record under c runs on engine.
func (c Condition) Applies(engine string) bool {
	match := strings.EqualFold(c.Engine, engine)
	if c.OnlyIf {
		return match
	}
	return !match
}

// ExpectedError says which error a statement or query must fail with.
type ExpectedError struct {
	// Regex, when not empty, must match (unanchored) the error message.
	// It is the rest of the "statement error" or "query error" line.
	Regex string
	// Message, when not empty, is a multi-line message given after "----";
	// it must equal the error message, surrounding whitespace ignored.
	Message string
}

// Record is one unit of a test file.
type Record struct {
	Kind       Kind
	Path       string // the file the record came from
	Line       int    // 1-based line of the record's directive
	Conditions []Condition

	// SQL is the statement or query text (lines joined by "\n").
	// For KindSystem it is the shell command.
	SQL string

	// Err is non-nil when the statement or query must fail.
	Err *ExpectedError
	// Count is N of "statement count N" (-1 otherwise). The runner checks
	// it with a DB that is a Counter; otherwise it is "statement ok".
	Count int64

	// Query fields.
	Types    string   // the declared type string, upper-cased ("" if omitted)
	Sort     SortMode // explicit sort mode, or SortDefault
	Label    string
	Expected []string // expected result lines (or expected stdout for system)
	// HasExpected is true when "----" was present.
	HasExpected bool
	Retry       int           // retry N (0: run once)
	Backoff     time.Duration // backoff between retries

	// Arg is the argument of hash-threshold, include, control (the whole
	// rest of the line), and the directive line of an unknown record.
	Arg       string
	Threshold int           // hash-threshold
	Duration  time.Duration // sleep

	// Loop fields.
	LoopVar   string
	LoopStart int
	LoopCount int
	Body      []Record

	// Reason says why a KindUnknown record is not run.
	Reason string
}

// ParseError is a syntax error in a test file.
type ParseError struct {
	Path string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
}

// knownDirectives start a record; a line starting with one of them ends the
// lines swallowed by an unknown directive.
var knownDirectives = map[string]bool{
	"statement": true, "query": true, "hash-threshold": true, "halt": true,
	"include": true, "sleep": true, "system": true, "control": true,
	"loop": true, "endloop": true, "skipif": true, "onlyif": true,
}

type parser struct {
	path  string
	lines []string
	pos   int // index of the next line
	loops int // depth of loop nesting; "endloop" then ends a record
}

// Parse reads a test file. path is recorded in the records and used for
// errors and for resolving includes; it is not opened.
func Parse(r io.Reader, path string) ([]Record, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p := &parser{path: path, lines: lines}
	recs, end, err := p.parseBlock(false)
	if err != nil {
		return nil, err
	}
	if end != 0 {
		return nil, p.errorf(end, "endloop without loop")
	}
	return recs, nil
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return &ParseError{Path: p.path, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

func isComment(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "#") }

// stripComment removes a trailing "# comment" from a directive line.
func stripComment(s string) string {
	if i := strings.Index(s, "#"); i >= 0 {
		return s[:i]
	}
	return s
}

// parseBlock parses records up to the end of input or, inside a loop, up to
// "endloop". It returns the line number of the endloop it stopped at (0 at
// the end of input).
func (p *parser) parseBlock(inLoop bool) ([]Record, int, error) {
	var recs []Record
	var conds []Condition
	for p.pos < len(p.lines) {
		raw := p.lines[p.pos]
		lineNo := p.pos + 1
		if isBlank(raw) || isComment(raw) {
			p.pos++
			continue
		}
		fields := strings.Fields(stripComment(raw))
		if len(fields) == 0 {
			p.pos++
			continue
		}
		switch fields[0] {
		case "skipif", "onlyif":
			if len(fields) < 2 {
				return nil, 0, p.errorf(lineNo, "%s needs an engine name", fields[0])
			}
			conds = append(conds, Condition{OnlyIf: fields[0] == "onlyif", Engine: fields[1]})
			p.pos++
			continue
		case "endloop":
			if !inLoop {
				return nil, lineNo, nil
			}
			p.pos++
			return recs, lineNo, nil
		}
		rec, err := p.parseRecord(fields, lineNo)
		if err != nil {
			return nil, 0, err
		}
		rec.Conditions = conds
		conds = nil
		recs = append(recs, rec)
	}
	if inLoop {
		return nil, 0, p.errorf(len(p.lines), "loop without endloop")
	}
	return recs, 0, nil
}

// readUntil returns the lines from the current position up to (not
// including) a blank line, or "----" when dashes is true, and whether it
// stopped at "----" (which it consumes).
func (p *parser) readUntil(dashes, skipComments bool) ([]string, bool) {
	var out []string
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		if isBlank(l) || p.loops > 0 && strings.TrimSpace(l) == "endloop" {
			return out, false
		}
		p.pos++
		if dashes && strings.TrimSpace(l) == "----" {
			return out, true
		}
		if skipComments && isComment(l) {
			continue
		}
		out = append(out, l)
	}
	return out, false
}

// restOfLine returns what follows the first n fields of line, trimmed.
func restOfLine(line string, n int) string {
	s := strings.TrimSpace(line)
	for i := 0; i < n; i++ {
		j := strings.IndexAny(s, " \t")
		if j < 0 {
			return ""
		}
		s = strings.TrimLeft(s[j:], " \t")
	}
	return strings.TrimSpace(s)
}

func (p *parser) parseRecord(fields []string, lineNo int) (Record, error) {
	raw := p.lines[p.pos]
	p.pos++
	rec := Record{Path: p.path, Line: lineNo, Count: -1}
	switch fields[0] {
	case "statement":
		rec.Kind = KindStatement
		if len(fields) < 2 {
			return rec, p.errorf(lineNo, "statement needs ok, error or count")
		}
		var tail []string
		switch fields[1] {
		case "ok":
			tail = fields[2:]
		case "error":
			rec.Err = &ExpectedError{Regex: restOfLine(raw, 2)}
		case "count":
			if len(fields) < 3 {
				return rec, p.errorf(lineNo, "statement count needs a number")
			}
			n, err := strconv.ParseInt(fields[2], 10, 64)
			if err != nil {
				return rec, p.errorf(lineNo, "statement count: %v", err)
			}
			rec.Count = n
			tail = fields[3:]
		default:
			return rec, p.errorf(lineNo, "statement %s: want ok, error or count", fields[1])
		}
		if err := p.parseRetry(&rec, tail, lineNo); err != nil {
			return rec, err
		}
		sql, dashes := p.readUntil(true, true)
		rec.SQL = strings.Join(sql, "\n")
		if dashes {
			rest, _ := p.readUntil(false, false)
			if rec.Err != nil {
				rec.Err.Message = strings.Join(rest, "\n")
			}
		}
		if strings.TrimSpace(rec.SQL) == "" {
			return rec, p.errorf(lineNo, "statement without SQL")
		}
		return rec, nil

	case "query":
		rec.Kind = KindQuery
		args := fields[1:]
		if len(args) > 0 && args[0] == "error" {
			rec.Err = &ExpectedError{Regex: restOfLine(raw, 2)}
			args = nil
		}
		if len(args) > 0 {
			if _, ok := parseSortMode(args[0]); !ok && args[0] != "retry" {
				rec.Types = strings.ToUpper(args[0])
				args = args[1:]
			}
		}
		if len(args) > 0 {
			if m, ok := parseSortMode(args[0]); ok {
				rec.Sort = m
				args = args[1:]
			}
		}
		if len(args) > 0 && args[0] != "retry" {
			rec.Label = args[0]
			args = args[1:]
		}
		if err := p.parseRetry(&rec, args, lineNo); err != nil {
			return rec, err
		}
		sql, dashes := p.readUntil(true, true)
		rec.SQL = strings.Join(sql, "\n")
		if strings.TrimSpace(rec.SQL) == "" {
			return rec, p.errorf(lineNo, "query without SQL")
		}
		if dashes {
			rec.HasExpected = true
			rest, _ := p.readUntil(false, false)
			if rec.Err != nil {
				rec.Err.Message = strings.Join(rest, "\n")
			} else {
				rec.Expected = rest
			}
		}
		return rec, nil

	case "hash-threshold":
		rec.Kind = KindHashThreshold
		if len(fields) < 2 {
			return rec, p.errorf(lineNo, "hash-threshold needs a number")
		}
		n, err := strconv.Atoi(fields[1])
		if err != nil || n < 0 {
			return rec, p.errorf(lineNo, "hash-threshold: bad number %q", fields[1])
		}
		rec.Threshold = n
		rec.Arg = fields[1]
		return rec, nil

	case "halt":
		rec.Kind = KindHalt
		return rec, nil

	case "include":
		rec.Kind = KindInclude
		rec.Arg = strings.TrimSpace(stripComment(restOfLine(raw, 1)))
		if rec.Arg == "" {
			return rec, p.errorf(lineNo, "include needs a file name or glob")
		}
		return rec, nil

	case "sleep":
		rec.Kind = KindSleep
		arg := strings.TrimSpace(stripComment(restOfLine(raw, 1)))
		d, err := parseDuration(arg)
		if err != nil {
			return rec, p.errorf(lineNo, "sleep: %v", err)
		}
		rec.Duration = d
		rec.Arg = arg
		return rec, nil

	case "system":
		if len(fields) < 2 || fields[1] != "ok" {
			rec.Kind = KindUnknown
			rec.Arg = strings.TrimSpace(raw)
			rec.Reason = "only \"system ok\" is supported"
			p.skipUnknownBody()
			return rec, nil
		}
		rec.Kind = KindSystem
		cmd, dashes := p.readUntil(true, false)
		rec.SQL = strings.Join(cmd, "\n")
		if strings.TrimSpace(rec.SQL) == "" {
			return rec, p.errorf(lineNo, "system ok without a command")
		}
		if dashes {
			rec.HasExpected = true
			rec.Expected, _ = p.readUntil(false, false)
		}
		return rec, nil

	case "control":
		rec.Arg = strings.TrimSpace(stripComment(restOfLine(raw, 1)))
		if len(fields) >= 3 {
			switch fields[1] {
			case "sortmode":
				if m, ok := parseSortMode(fields[2]); ok && m != SortDefault {
					rec.Kind = KindControl
					return rec, nil
				}
				return rec, p.errorf(lineNo, "control sortmode: unknown mode %q", fields[2])
			case "substitution":
				if fields[2] == "on" || fields[2] == "off" {
					rec.Kind = KindControl
					return rec, nil
				}
				return rec, p.errorf(lineNo, "control substitution: want on or off, got %q", fields[2])
			case "resultmode":
				if fields[2] == "rowwise" || fields[2] == "valuewise" {
					rec.Kind = KindControl
					return rec, nil
				}
				return rec, p.errorf(lineNo, "control resultmode: unknown mode %q", fields[2])
			}
		}
		rec.Kind = KindUnknown
		rec.Arg = strings.TrimSpace(raw)
		rec.Reason = "unsupported control directive"
		return rec, nil

	case "loop":
		rec.Kind = KindLoop
		if len(fields) < 4 {
			return rec, p.errorf(lineNo, "loop needs a variable, a start and a count")
		}
		start, err1 := strconv.Atoi(fields[2])
		count, err2 := strconv.Atoi(fields[3])
		if err1 != nil || err2 != nil || count < 0 {
			return rec, p.errorf(lineNo, "loop: bad start or count")
		}
		rec.LoopVar, rec.LoopStart, rec.LoopCount = fields[1], start, count
		p.loops++
		body, _, err := p.parseBlock(true)
		p.loops--
		if err != nil {
			return rec, err
		}
		rec.Body = body
		return rec, nil
	}

	rec.Kind = KindUnknown
	rec.Arg = strings.TrimSpace(raw)
	rec.Reason = fmt.Sprintf("unsupported directive %q", fields[0])
	p.skipUnknownBody()
	return rec, nil
}

// skipUnknownBody consumes the lines after an unknown directive up to a
// blank line or a line that starts a known record.
func (p *parser) skipUnknownBody() {
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		if isBlank(l) {
			return
		}
		if f := strings.Fields(l); len(f) > 0 && knownDirectives[f[0]] {
			return
		}
		p.pos++
	}
}

func (p *parser) parseRetry(rec *Record, args []string, lineNo int) error {
	if len(args) == 0 {
		return nil
	}
	// retry N backoff D
	if len(args) != 4 || args[0] != "retry" || args[2] != "backoff" {
		return p.errorf(lineNo, "unexpected %q (want \"retry N backoff DURATION\")", strings.Join(args, " "))
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n < 0 {
		return p.errorf(lineNo, "retry: bad count %q", args[1])
	}
	d, err := parseDuration(args[3])
	if err != nil {
		return p.errorf(lineNo, "backoff: %v", err)
	}
	rec.Retry, rec.Backoff = n, d
	return nil
}

// parseDuration accepts Go durations ("1s", "500ms", "1m30s") and the
// humantime spellings sqllogictest-rs files use ("1sec", "2min", "1 s").
func parseDuration(s string) (time.Duration, error) {
	t := strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if t == "" {
		return 0, fmt.Errorf("missing duration")
	}
	if d, err := time.ParseDuration(t); err == nil {
		return d, nil
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], t[i:]
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q", s)
	}
	var u time.Duration
	switch unit {
	case "sec", "secs", "second", "seconds":
		u = time.Second
	case "min", "mins", "minute", "minutes":
		u = time.Minute
	case "msec", "millis", "milliseconds":
		u = time.Millisecond
	case "hour", "hours", "hr":
		u = time.Hour
	default:
		return 0, fmt.Errorf("bad duration %q", s)
	}
	return time.Duration(f * float64(u)), nil
}
