package differential

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/slt"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// suites is where the compared suites live.
const suites = "../sqllogic/testdata"

// batchSizes are the streaming runs' batch sizes ("" the default).
var batchSizes = []string{"", "3", "1"}

// TestDifferential runs testdata/differential: "compare file=<suite>"
// prints the verdicts of the suite's queries.
func TestDifferential(t *testing.T) {
	datadriven.RunTest(t, "testdata/differential", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "compare":
			if d.HasArg("file") {
				var file string
				d.ScanArgs(t, "file", &file)
				f, err := os.Open(filepath.Join(suites, file))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				return compare(t, f, file)
			}
			// The records of a suite given inline (queries without results).
			return compare(t, strings.NewReader(d.Input), d.Pos)
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

// run is one session the suite's records run on.
type run struct {
	name string
	db   *session.SLTDB
	mode mode
	// retractions counts the -U and -D rows a follow run's queries folded.
	retractions int
}

// mode is how a run reads the tables.
type mode int

const (
	// bounded: a query is a bounded SELECT of the tables.
	bounded mode = iota
	// replay: the tables without WITH are created as replays
	// ('scan.mode' = 'replay'); a query's changelog is folded to its end.
	replay
	// follow: a query follows every table it reads (an OPTIONS hint put
	// after each name); once it runs, every table is updated in place
	// (UPDATE t SET c = c: a -U and a +U of every row), and its folded
	// changelog must come to the bounded result.
	follow
)

func newRun(t *testing.T, name string, m mode, batchSize string, settings ...string) *run {
	db, err := session.NewSLTDB(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if batchSize != "" {
		settings = append(settings, "SET 'table.exec.batch-size' = '"+batchSize+"'")
	}
	for _, st := range settings {
		if err := db.Exec(context.Background(), st); err != nil {
			t.Fatal(err)
		}
	}
	return &run{name: name, db: db, mode: m}
}

// exec runs the statements of text; a streaming run creates each table
// without WITH as an in-memory table read as a replay.
func (r *run) exec(ctx context.Context, text string) error {
	stmts, err := sql.Parse(text)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		if ct, ok := st.(*sql.CreateTable); ok && r.mode == replay && !hasConnector(ct) {
			ct.Options = append(ct.Options, sql.Option{Key: "connector", Value: "memory"},
				sql.Option{Key: "scan.mode", Value: "replay"})
		}
		if _, err := r.db.Session().ExecuteStatement(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

func hasConnector(ct *sql.CreateTable) bool {
	for _, o := range ct.Options {
		if strings.EqualFold(o.Key, "connector") {
			return true
		}
	}
	return false
}

// query runs the statements of text and returns the last one's rows,
// printed and sorted: a bounded run's final rows, a replay's changelog
// folded to a table, a follower's folded changelog once it equals want
// (or when it gave up waiting).
func (r *run) query(ctx context.Context, text string, want []string) ([]string, error) {
	if r.mode == follow {
		text = r.followHints(text)
	}
	stmts, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("no statement")
	}
	s := r.db.Session()
	for _, st := range stmts[:len(stmts)-1] {
		if _, err := s.ExecuteStatement(ctx, st); err != nil {
			return nil, err
		}
	}
	sel, ok := stmts[len(stmts)-1].(*sql.Select)
	if !ok {
		return nil, errNotSelect
	}
	var cols types.Schema
	var rows [][]types.Value
	switch r.mode {
	case bounded:
		res, err := s.ExecuteStatement(ctx, sel)
		if err != nil {
			return nil, err
		}
		cols, rows = res.Columns, res.Rows
	case replay:
		tb := session.NewTable()
		err := s.Query(ctx, sel, func(sc types.Schema, _ bool) { cols = sc }, tb.Apply)
		if err != nil {
			return nil, err
		}
		rows = tb.Rows()
	case follow:
		return r.converge(ctx, sel, want)
	}
	return format(cols, rows), nil
}

// format prints rows, sorted.
func format(cols types.Schema, rows [][]types.Value) []string {
	out := make([]string, len(rows))
	for i, row := range rows {
		var b strings.Builder
		for c, v := range row {
			if c > 0 {
				b.WriteByte(' ')
			}
			if v == nil {
				b.WriteString("NULL")
			} else {
				b.WriteString(types.Format(cols[c].Type, v))
			}
		}
		out[i] = b.String()
	}
	slices.Sort(out)
	return out
}

// followHints puts an OPTIONS hint to follow after each name of an
// in-memory table that a FROM, a JOIN or a comma of a FROM list reads.
func (r *run) followHints(text string) string {
	cat := r.db.Session().Catalog()
	for _, name := range cat.Tables() {
		if t, ok := cat.Table(name); !ok || t.Connector != "memory" {
			continue
		}
		re := regexp.MustCompile(`(?i)((?:\bFROM|\bJOIN|,)\s+)(` + regexp.QuoteMeta(name) + `)\b`)
		text = re.ReplaceAllString(text, "${1}${2} /*+ OPTIONS('scan.mode'='follow') */")
	}
	return text
}

// converge runs sel following its tables; once it runs, it updates every
// in-memory table in place and waits for the folded changelog to equal
// want. It returns the rows it last saw.
func (r *run) converge(ctx context.Context, sel *sql.Select, want []string) ([]string, error) {
	s := r.db.Session()
	qctx, cancel := context.WithCancel(ctx)
	var (
		mu     sync.Mutex
		cols   types.Schema
		tb     = session.NewTable()
		errc   = make(chan error, 1)
		schema = make(chan struct{})
		done   = make(chan struct{})
	)
	defer func() { cancel(); <-done }()
	go func() {
		defer close(done)
		errc <- s.Query(qctx, sel, func(sc types.Schema, _ bool) { cols = sc; close(schema) }, func(c session.Change) error {
			mu.Lock()
			defer mu.Unlock()
			if c.Op.IsRetract() {
				r.retractions++
			}
			return tb.Apply(c)
		})
	}()
	select {
	case err := <-errc:
		return nil, err // a planning error
	case <-schema:
	}
	current := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return format(cols, tb.Rows())
	}
	// The snapshot first, so that the updates come as changes. A query
	// that reads no table it can follow (VALUES, a view) ends: its rows
	// are its result.
	if err := r.waitFor(ctx, errc, func() bool { return slices.Equal(current(), want) }); err == errEnded {
		return current(), nil
	} else if err != nil {
		return current(), err
	}
	cat := s.Catalog()
	for _, name := range cat.Tables() {
		t, ok := cat.Table(name)
		if !ok || t.Connector != "memory" || t.AppendOnly {
			continue
		}
		phys, _ := t.Physical()
		c := "`" + phys[0].Name + "`"
		if _, err := s.Execute(ctx, "UPDATE `"+t.Name+"` SET "+c+" = "+c); err != nil {
			return nil, fmt.Errorf("updating %s in place: %w", t.Name, err)
		}
	}
	err := r.waitFor(ctx, errc, func() bool { return slices.Equal(current(), want) })
	if err == errEnded {
		err = nil
	}
	return current(), err
}

var errEnded = fmt.Errorf("the query ended")

// waitFor polls ok until it holds, the query fails (errc) or 20 s passed
// (then it returns nil: the caller compares what it got).
func (r *run) waitFor(ctx context.Context, errc chan error, ok func() bool) error {
	deadline := time.Now().Add(20 * time.Second)
	for !ok() && time.Now().Before(deadline) {
		select {
		case err := <-errc:
			if err == nil {
				err = errEnded
			}
			errc <- err
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

var errNotSelect = fmt.Errorf("not a SELECT")

// differentialEngine is the engine name a suite's `skipif differential`
// names: such a record runs in tests/sqllogic but is not compared here.
const differentialEngine = "differential"

// streamingSection says whether a record starts a suite's own streaming
// jobs, where the comparison stops.
func streamingSection(r slt.Record) bool {
	norm := strings.ToLower(strings.Join(strings.Fields(r.SQL), " "))
	return r.Kind == slt.KindStatement && strings.Contains(norm, "'table.dml-sync' = 'false'")
}

// compare runs the suite read from r (named path) bounded and streaming
// and returns the verdicts.
func compare(t *testing.T, r io.Reader, path string) string {
	recs, err := slt.Parse(r, path)
	if err != nil {
		t.Fatal(err)
	}
	base := newRun(t, "bounded", bounded, "")
	var streams []*run
	for _, bs := range batchSizes {
		name := "streaming"
		if bs != "" {
			name += " at batch size " + bs
		}
		streams = append(streams, newRun(t, name, replay, bs))
	}
	streams = append(streams,
		newRun(t, "streaming at parallelism 2", replay, "3", "SET 'parallelism.default' = '2'"),
		newRun(t, "following, updated in place", follow, "3"))
	var (
		equal   int
		verdict []string
	)
	note := func(r slt.Record, format string, args ...any) {
		verdict = append(verdict, fmt.Sprintf("%s\n  %s", firstLine(r.SQL), fmt.Sprintf(format, args...)))
	}
records:
	for _, r := range recs {
		if streamingSection(r) {
			break
		}
		for _, c := range r.Conditions {
			if !c.Applies(slt.DefaultEngine) {
				continue records
			}
			if !c.Applies(differentialEngine) {
				// The suite marks a record whose result depends on when
				// rows arrive (late rows): a replay need not agree.
				note(r, "not compared (skipif %s)", differentialEngine)
				continue records
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		switch {
		case r.Kind == slt.KindStatement:
			berr := base.exec(ctx, r.SQL)
			for _, s := range streams {
				if serr := s.exec(ctx, r.SQL); (serr == nil) != (berr == nil) {
					note(r, "statement: bounded %s, %s %s", outcome(berr), s.name, outcome(serr))
				}
			}
		case r.Kind == slt.KindQuery && r.Err == nil && r.Retry == 0:
			want, berr := base.query(ctx, r.SQL, nil)
			if berr != nil {
				break // not a SELECT, or one the bounded run refuses
			}
			// The runs that did not come to want, by what they got (runs
			// that got the same are named together).
			var outcomes []string
			runs := map[string][]string{}
			for _, s := range streams {
				got, serr := s.query(ctx, r.SQL, want)
				o := ""
				switch {
				case serr != nil:
					o = oneLine(serr.Error())
				case !slices.Equal(got, want):
					o = "differs: " + diff(want, got)
				default:
					continue
				}
				if runs[o] == nil {
					outcomes = append(outcomes, o)
				}
				runs[o] = append(runs[o], s.name)
			}
			for _, o := range outcomes {
				note(r, "%s: %s", strings.Join(runs[o], ", "), o)
			}
			if len(outcomes) == 0 {
				equal++
			}
		}
		cancel()
	}
	// The follow run's queries saw the tables change under them.
	if f := streams[len(streams)-1]; equal > 0 && f.retractions == 0 {
		t.Errorf("%s: the followers folded no retraction: the in-place updates reached none", path)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d queries come to the bounded result in every run\n", equal)
	for _, v := range verdict {
		b.WriteString(v + "\n")
	}
	return b.String()
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	return "failed: " + oneLine(err.Error())
}

func firstLine(s string) string {
	s = oneLine(s)
	if len(s) > 150 {
		s = s[:150] + "..."
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// diff says which rows one multiset has that the other has not.
func diff(want, got []string) string {
	count := map[string]int{}
	for _, r := range want {
		count[r]++
	}
	for _, r := range got {
		count[r]--
	}
	var missing, extra []string
	for _, r := range want {
		if count[r] > 0 {
			missing = append(missing, r)
			count[r]--
		}
	}
	for r, n := range count {
		for ; n < 0; n++ {
			extra = append(extra, r)
		}
	}
	slices.Sort(extra)
	return fmt.Sprintf("missing %q, extra %q", trim(missing), trim(extra))
}

func trim(rows []string) []string {
	if len(rows) > 5 {
		return append(rows[:5:5], fmt.Sprintf("(%d more)", len(rows)-5))
	}
	return rows
}
