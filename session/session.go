package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/internal/config"
	"github.com/streamsql/streamsql/internal/datadir"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"

	// The connectors register themselves with catalog and exec.
	_ "github.com/streamsql/streamsql/connectors"
	memtable "github.com/streamsql/streamsql/connectors/memory"
)

// Session runs statements against a data directory. It is safe for
// concurrent use; statements run one at a time.
type Session struct {
	dataDir string
	cat     *catalog.Catalog
	// Fresh discards the checkpoints of a job before submitting it, instead
	// of resuming from them (the --fresh flag).
	Fresh bool
	// RestoreNext is the checkpoint or savepoint that the next job
	// submitted starts from (the -s flag), once: it is cleared when a job
	// is submitted with it. SET 'execution.state-recovery.path', as in
	// Flink, applies to every job submitted until RESET instead.
	RestoreNext string
	// AllowOlderRestore lets a job restore a checkpoint or savepoint older
	// than a completed checkpoint its folder holds (--allow-older-restore);
	// without it that is refused, as the output between the two would be
	// written again.
	AllowOlderRestore bool
	// tmpDir stands in for the data directory of an in-memory session.
	tmpDir string
	// lock is the data directory's lock, held from Open to Close.
	lock *datadir.Lock
	// stateFS, when set, is the filesystem under the jobs' Pebble stores
	// and their checkpoints (tests inject faults with it).
	stateFS vfs.FS

	mu sync.Mutex
	// opts are the options SET; base the session's own defaults
	// (SetDefault) and the configuration file's options (ReadConfig),
	// which RESET returns to.
	opts, base map[string]string
	// baseFrom is, for each key of base from the configuration file, its
	// "path:line" (sourceLocked).
	baseFrom map[string]string
	// configFile is the absolute path of the configuration file read ("":
	// none).
	configFile string
	// settings are the session's own options parsed from opts and base,
	// kept current by update.
	settings Settings
	jobs     *jobRegistry
	// indexes are the names of the no-op indexes of CREATE INDEX, by
	// lower-cased name, with their table (index.go).
	indexes map[string]string
	// memory is the state memory of the jobs submitted last (memory.go).
	memory *state.ManagedMemory
	// allowed are the directories the statements may name files under
	// (allowed.go); any when not restricted.
	allowed []string
	// allowedRemote are the object store locations under which they may
	// read and write (SetAllowedPaths); restricted: SetAllowedPaths was
	// called.
	allowedRemote []string
	restricted    bool
}

// SetDefault makes value the session's default for key: what the option is
// until SET, and again after RESET (`streamsql test` turns
// 'table.dml-sync' on this way). The key and value are checked as SET
// checks them.
func (s *Session) SetDefault(key, value string) error {
	k, err := checkOption(key, value)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.update(k, value, true); err != nil {
		return err
	}
	delete(s.baseFrom, k)
	return nil
}

// Open opens (creating it if needed) the data directory dir and its catalog.
// An empty dir keeps everything in memory. The session holds dir's lock
// (package datadir) until Close: while another session, in this process or
// another, has dir open, Open fails with an error that names the owner
// (errors.Is datadir.ErrLocked) and touches nothing in dir.
func Open(dir string) (*Session, error) {
	var lock *datadir.Lock
	if dir != "" {
		var err error
		if lock, err = datadir.Acquire(dir); err != nil {
			return nil, err
		}
	}
	cat, err := catalog.Open(dir)
	if err != nil {
		lock.Release()
		return nil, err
	}
	st, err := parseSettings(nil)
	if err != nil {
		lock.Release()
		return nil, err
	}
	return &Session{dataDir: dir, cat: cat, opts: map[string]string{}, settings: st, jobs: newJobRegistry(), lock: lock}, nil
}

// Catalog is the session's catalog.
func (s *Session) Catalog() *catalog.Catalog { return s.cat }

// DataDir is the session's data directory.
func (s *Session) DataDir() string { return s.dataDir }

// Close stops every running job, waits for them, forgets the in-process
// state of the session's in-memory tables (connectors/memory: a new
// session reads them from disk, as a new process would) and releases the
// data directory.
func (s *Session) Close() error {
	s.jobs.stopAll()
	s.mu.Lock()
	if s.memory != nil {
		s.memory.Close()
		s.memory = nil
	}
	s.mu.Unlock()
	// The rows of its tables created without WITH stay on disk; what the
	// process held of them (and the changes kept for the jobs that follow
	// them) goes with the session.
	if s.dataDir != "" {
		memtable.Reset(s.dataDir)
	}
	if s.tmpDir != "" {
		memtable.Reset(s.tmpDir)
		os.RemoveAll(s.tmpDir)
	}
	return s.lock.Release()
}

// ResultKind says what a Result holds.
type ResultKind int

const (
	// ResultOK is a statement that only reports success (Message).
	ResultOK ResultKind = iota
	// ResultRows is a table: Columns and Rows.
	ResultRows
	// ResultText is preformatted text (EXPLAIN).
	ResultText
	// ResultJob is a submitted job (JobID; Message says so).
	ResultJob
)

// Result is what one statement returns.
type Result struct {
	Kind    ResultKind
	Message string
	Columns types.Schema
	Rows    [][]types.Value
	Text    string
	JobID   string
	// RowsChanged is the number of rows an UPDATE or DELETE changed, or
	// an INSERT run to its end ('table.dml-sync') wrote; 0 for other
	// statements.
	RowsChanged int64
}

// Execute parses text and executes its statements in order, stopping at the
// first error. It returns the results of the statements that ran.
func (s *Session) Execute(ctx context.Context, text string) ([]*Result, error) {
	stmts, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	var out []*Result
	for _, st := range stmts {
		r, err := s.ExecuteStatement(ctx, st)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ExecuteStatement executes one parsed statement. A SELECT runs to
// completion (it must read bounded input; see Query for streaming results).
func (s *Session) ExecuteStatement(ctx context.Context, st sql.Statement) (*Result, error) {
	switch st := st.(type) {
	case *sql.CreateTable:
		return s.createTable(st)
	case *sql.CreateView:
		return s.createView(st)
	case *sql.CreateFunction:
		return s.createFunction(st)
	case *sql.Drop:
		if st.Kind == sql.DropFunction {
			return s.dropFunction(st)
		}
		return s.drop(st)
	case *sql.DescribeFunction:
		return s.describeFunction(st)
	case *sql.AlterTable:
		return s.alterTable(st)
	case *sql.Index:
		return s.index(st)
	case *sql.Set:
		return s.set(st)
	case *sql.Reset:
		var err error
		key, ok := rwOptions[strings.ToUpper(st.Key)]
		if !ok && st.Key != "" {
			k, err := optionKey(st.Key)
			if err != nil {
				return nil, optionError(st, st.Key, err)
			}
			key = k
		}
		s.mu.Lock()
		if st.Key == "" {
			s.opts = map[string]string{}
			err = s.update("", "", false)
		} else {
			err = s.update(key, "", false)
		}
		s.mu.Unlock()
		if err != nil {
			return nil, sql.Errorf(st.Pos(), "%v", err)
		}
		if st.Key == "" {
			if s.ConfigFile() != "" {
				return &Result{Message: "[INFO] All session properties have been set to the configuration file's values and their defaults."}, nil
			}
			return &Result{Message: "[INFO] All session properties have been set to their default values."}, nil
		}
		return &Result{Message: "[INFO] Session property has been reset."}, nil
	case *sql.Show:
		return s.show(st)
	case *sql.Describe:
		return s.describe(st)
	case *sql.DescribeJob:
		return s.describeJob(st)
	case *sql.Use:
		return s.use(st)
	case *sql.Explain:
		return s.explain(ctx, st)
	case *sql.Select:
		return s.selectBounded(ctx, st)
	case *sql.Insert:
		if st.Replace {
			if err := s.checkReplace(st); err != nil {
				return nil, err
			}
		}
		return s.submit(ctx, st, []*sql.Insert{st})
	case *sql.Update, *sql.Delete:
		return s.change(ctx, st)
	case *sql.StatementSet:
		return s.submit(ctx, st, st.Inserts)
	case *sql.StopJob:
		e := s.jobs.find(st.ID)
		if e == nil {
			return nil, &sql.Error{Pos: st.Pos(), Msg: fmt.Sprintf("%v '%s'", ErrNoSuchJob, st.ID), Hint: "SHOW JOBS lists the job ids"}
		}
		if st.WithSavepoint {
			f, err := checkpoint.ParseFormat(st.Format)
			if err != nil {
				return nil, sql.Errorf(st.Pos(), "%v", err)
			}
			path, err := s.savepointAndStop(ctx, e, f)
			if err != nil {
				return nil, sql.Errorf(st.Pos(), "%v", err)
			}
			return &Result{Message: fmt.Sprintf("[INFO] Job '%s' stopped with savepoint %s", st.ID, path)}, nil
		}
		e.stop()
		return &Result{Message: fmt.Sprintf("[INFO] Job '%s' stopped.", st.ID)}, nil
	}
	return nil, sql.Errorf(st.Pos(), "statement %T is not supported", st)
}

// planner returns a planner with the job options as they are now; the
// error is a bad option value (or a parallelism above the max parallelism)
// placed at st.
func (s *Session) planner(st sql.Statement) (*planner.Planner, error) {
	o, err := s.jobOptions()
	if err != nil {
		return nil, sql.Errorf(st.Pos(), "%v", err)
	}
	p := &planner.Planner{Catalog: s.cat, Options: o}
	p.RunQuery = func(n planner.Node) ([][]types.Value, error) {
		return s.runBounded(p.Context(), p, n.(*planner.Sink))
	}
	return p, nil
}

func (s *Session) createTable(st *sql.CreateTable) (*Result, error) {
	if st.Temporary {
		return nil, &sql.Error{Pos: st.Pos(), Msg: "CREATE TEMPORARY TABLE is not supported: every table is kept in the data directory's catalog",
			Hint: "write CREATE TABLE (DROP TABLE removes it)"}
	}
	if st.Comment != "" {
		return nil, &sql.Error{Pos: st.Pos(), Msg: "table comments are not kept in the catalog",
			Hint: "leave out COMMENT '...'"}
	}
	for _, c := range st.Columns {
		if err := refuseUnkept(c); err != nil {
			return nil, err
		}
	}
	t := &catalog.Table{Name: st.Name, Options: map[string]string{}, AppendOnly: st.AppendOnly}
	seen := map[string]bool{}
	for _, c := range st.Columns {
		if seen[strings.ToLower(c.Name)] {
			return nil, sql.Errorf(c.Pos, "column '%s' is declared twice", c.Name)
		}
		seen[strings.ToLower(c.Name)] = true
		if c.Expr != nil {
			// A computed column: typed below, once the physical columns are known.
			t.Columns = append(t.Columns, types.Column{Name: c.Name})
			t.Computed = append(t.Computed, catalog.ComputedColumn{Name: c.Name, Expr: c.ExprText})
			continue
		}
		typ, err := planner.TypeFromName(c.Type)
		if err != nil {
			return nil, err
		}
		typ.NotNull = c.NotNull
		t.Columns = append(t.Columns, types.Column{Name: c.Name, Type: typ})
	}
	proctime := ""
	for _, c := range st.Columns {
		if c.Expr == nil {
			continue
		}
		p, err := s.planner(st)
		if err != nil {
			return nil, err
		}
		typ, err := p.ComputedColumnType(st, t, c.Expr)
		if err != nil {
			return nil, err
		}
		if planner.IsProctimeCall(c.Expr) {
			if proctime != "" {
				return nil, sql.Errorf(c.Pos, "a table can have only one PROCTIME() column ('%s' is one)", proctime)
			}
			proctime = c.Name
		}
		t.Columns[t.Columns.Index(c.Name)].Type = typ
	}
	for _, k := range st.PrimaryKey {
		i := t.Columns.Index(k)
		if i < 0 {
			return nil, sql.Errorf(st.Pos(), "PRIMARY KEY column '%s' is not a column of '%s'", k, st.Name)
		}
		if _, computed := t.ComputedExpr(k); computed {
			return nil, sql.Errorf(st.Pos(), "PRIMARY KEY column '%s' of '%s' is a computed column", k, st.Name)
		}
		t.Columns[i].Type.NotNull = true
		t.PrimaryKey = append(t.PrimaryKey, t.Columns[i].Name)
	}
	for _, k := range st.PartitionKeys {
		i := t.Columns.Index(k)
		if i < 0 {
			return nil, sql.Errorf(st.PartitionPos, "PARTITIONED BY column '%s' is not a column of '%s'", k, st.Name)
		}
		if _, computed := t.ComputedExpr(k); computed {
			return nil, sql.Errorf(st.PartitionPos, "PARTITIONED BY column '%s' of '%s' is a computed column", k, st.Name)
		}
		t.PartitionKeys = append(t.PartitionKeys, t.Columns[i].Name)
	}
	if w := st.Watermark; w != nil {
		i := t.Columns.Index(w.Column)
		if i < 0 {
			return nil, sql.Errorf(w.Pos, "WATERMARK FOR column '%s' is not a column of '%s'", w.Column, st.Name)
		}
		if strings.EqualFold(w.Column, proctime) {
			return nil, &sql.Error{Pos: w.Pos, Msg: fmt.Sprintf("WATERMARK FOR column '%s': a watermark cannot be defined for a processing-time attribute (PROCTIME())", w.Column),
				Hint: "declare the watermark on an event-time TIMESTAMP column"}
		}
		if t.Columns[i].Type.Kind != types.Timestamp {
			return nil, &sql.Error{Pos: w.Pos, Msg: fmt.Sprintf("WATERMARK FOR column '%s' must be a TIMESTAMP, it is %s", w.Column, t.Columns[i].Type), Hint: "declare it TIMESTAMP(3)"}
		}
		t.WatermarkColumn, t.WatermarkExpr = t.Columns[i].Name, w.ExprText
	}
	for _, o := range st.Options {
		if o.Key == "connector" {
			t.Connector = o.Value
			continue
		}
		if strings.EqualFold(o.Key, EventTimeField) {
			if err := eventTimeField(t, st, o); err != nil {
				return nil, err
			}
			continue
		}
		t.Options[o.Key] = o.Value
	}
	if err := s.checkTablePaths(t.Connector, t.Options); err != nil {
		pos := st.Pos()
		for _, o := range st.Options {
			if strings.EqualFold(o.Key, "path") {
				pos = o.Pos
			}
		}
		return nil, sql.Errorf(pos, "%v", err)
	}
	if st.OrReplace {
		return s.replaceTable(st, t)
	}
	existed := s.exists(t.Name)
	if err := s.cat.CreateTable(t, st.IfNotExists); errors.Is(err, catalog.ErrSameDefinition) {
		return &Result{Message: "[INFO] Table " + t.Name + " already exists with this definition."}, nil
	} else if err != nil {
		pos := st.Pos()
		for _, o := range st.Options {
			if strings.Contains(err.Error(), "'"+o.Key+"'") {
				pos = o.Pos
			}
		}
		return nil, &sql.Error{Pos: pos, Msg: err.Error()}
	}
	return created("Table", t.Name, existed), nil
}

func (s *Session) createView(st *sql.CreateView) (*Result, error) {
	// Plan the query now so that a broken view is rejected at creation.
	p, err := s.planner(st)
	if err != nil {
		return nil, err
	}
	if _, err := p.Query(st, st.Query); err != nil {
		return nil, err
	}
	v := &catalog.View{Name: st.Name, Columns: st.Columns, Query: st.QueryText, Temporary: st.Temporary}
	if st.OrReplace {
		return s.replaceView(st, v)
	}
	existed := s.exists(v.Name)
	if err := s.cat.CreateView(v, st.IfNotExists); errors.Is(err, catalog.ErrSameDefinition) {
		return &Result{Message: "[INFO] View " + v.Name + " already exists with this definition."}, nil
	} else if err != nil {
		return nil, &sql.Error{Pos: st.Pos(), Msg: err.Error()}
	}
	return created("View", v.Name, existed), nil
}

func (s *Session) drop(st *sql.Drop) (*Result, error) {
	var err error
	what, existed := "Table", false
	if st.Kind == sql.DropView {
		what = "View"
		_, existed = s.cat.View(st.Name)
		err = s.cat.DropView(st.Name, st.IfExists)
	} else {
		t, ok := s.cat.Table(st.Name)
		existed = ok
		err = s.cat.DropTable(st.Name, st.IfExists)
		if err == nil && ok {
			s.dropIndexesOf(t.Name)
			if c, found := catalog.LookupConnector(t.Connector); found && c.Drop != nil {
				err = c.Drop(s.path(), t.PhysicalTable())
			}
		}
	}
	if err != nil {
		hint := ""
		if errors.Is(err, catalog.ErrTableNotFound) {
			hint = "use DROP ... IF EXISTS to ignore a missing one"
		}
		return nil, &sql.Error{Pos: st.Pos(), Msg: err.Error(), Hint: hint}
	}
	if !existed {
		return &Result{Message: fmt.Sprintf("[INFO] %s '%s' does not exist: nothing dropped.", what, brief(st.Name))}, nil
	}
	return &Result{Message: fmt.Sprintf("[INFO] %s '%s' dropped.", what, brief(st.Name))}, nil
}

func (s *Session) set(st *sql.Set) (*Result, error) {
	if st.Key == "" {
		// Every option set, and those of shownDefaults, with where its
		// value comes from: the default, the configuration file or SET.
		// A secret's value is masked (config.Sensitive).
		s.mu.Lock()
		defer s.mu.Unlock()
		opts := s.effective()
		r := &Result{Kind: ResultRows, Columns: types.Schema{{Name: "key", Type: types.StringType},
			{Name: "value", Type: types.StringType}, {Name: "source", Type: types.StringType}}}
		for _, k := range sortedKeys(opts) {
			r.Rows = append(r.Rows, []types.Value{k, config.Show(k, opts[k]), s.sourceLocked(k)})
		}
		return r, nil
	}
	key, value := st.Key, st.Value
	k, v, rw, err := rwOption(key, value)
	if err != nil {
		return nil, sql.Errorf(st.Pos(), "%v", err)
	}
	if rw {
		key, value = k, v
	}
	if rw && value == "" {
		s.mu.Lock()
		err = s.update(key, "", false)
		s.mu.Unlock()
		if err != nil {
			return nil, sql.Errorf(st.Pos(), "%v", err)
		}
		return &Result{Message: "[INFO] Session property has been reset."}, nil
	}
	if !rw {
		if key, err = checkOption(key, value); err != nil {
			return nil, optionError(st, st.Key, err)
		}
	}
	s.mu.Lock()
	err = s.checkSetLocked(key)
	if err == nil {
		err = s.update(key, value, false)
	}
	s.mu.Unlock()
	if err != nil {
		return nil, optionError(st, st.Key, err)
	}
	return &Result{Message: msgSessionPropertySet}, nil
}

// optionError places an error about option key at the key in st.
func optionError(st sql.Statement, key string, err error) error {
	pos := st.Pos()
	if i := strings.Index(st.Text(), key); i >= 0 {
		pos = sql.Pos{Line: pos.Line, Col: pos.Col + i, Offset: pos.Offset + i}
		if nl := strings.LastIndexByte(st.Text()[:i], '\n'); nl >= 0 {
			pos.Line += strings.Count(st.Text()[:i], "\n")
			pos.Col = i - nl
		}
	}
	return sql.Errorf(pos, "%v", err)
}

func (s *Session) show(st *sql.Show) (*Result, error) {
	switch st.Kind {
	case sql.ShowTables:
		if st.Like != nil {
			return s.showCatalog(st)
		}
		r := &Result{Kind: ResultRows, Columns: types.Schema{{Name: "table name", Type: types.StringType}}}
		for _, n := range s.cat.Tables() {
			r.Rows = append(r.Rows, []types.Value{n})
		}
		for _, n := range s.cat.Views() {
			r.Rows = append(r.Rows, []types.Value{n})
		}
		return r, nil
	case sql.ShowViews:
		r := &Result{Kind: ResultRows, Columns: types.Schema{{Name: "view name", Type: types.StringType}}}
		for _, n := range s.cat.Views() {
			r.Rows = append(r.Rows, []types.Value{n})
		}
		return r, nil
	case sql.ShowJobs:
		return s.jobs.table(), nil
	}
	return s.showCatalog(st)
}

func (s *Session) describe(st *sql.Describe) (*Result, error) {
	r := &Result{Kind: ResultRows, Columns: types.Schema{
		{Name: "name", Type: types.StringType}, {Name: "type", Type: types.StringType},
		{Name: "null", Type: types.BooleanType}, {Name: "key", Type: types.StringType},
		{Name: "extras", Type: types.StringType}, {Name: "watermark", Type: types.StringType},
	}}
	if t, ok := s.cat.Table(st.Name); ok {
		for _, c := range t.Columns {
			key := any(nil)
			for _, k := range t.PrimaryKey {
				if strings.EqualFold(k, c.Name) {
					key = "PRI(" + strings.Join(t.PrimaryKey, ", ") + ")"
				}
			}
			wm := any(nil)
			if strings.EqualFold(t.WatermarkColumn, c.Name) {
				wm = t.WatermarkExpr
			}
			tt := c.Type
			tt.NotNull = false
			typ, extras := tt.String(), any(nil)
			if e, ok := t.ComputedExpr(c.Name); ok {
				// Flink's DESCRIBE: the expression in extras, a processing-time
				// attribute marked *PROCTIME* (TIMESTAMP(3), not Flink's
				// TIMESTAMP_LTZ(3): see planner.ProctimeType).
				extras = "AS " + e
				if p, ok := planner.ProctimeColumn(t); ok && strings.EqualFold(p, c.Name) {
					typ += " *PROCTIME*"
				}
			}
			r.Rows = append(r.Rows, []types.Value{c.Name, typ, !c.Type.NotNull, key, extras, wm})
		}
		return r, nil
	}
	if v, ok := s.cat.View(st.Name); ok {
		stmts, err := sql.Parse(v.Query)
		if err != nil {
			return nil, err
		}
		p, err := s.planner(st)
		if err != nil {
			return nil, err
		}
		sink, err := p.Query(stmts[0], stmts[0].(*sql.Select).Query)
		if err != nil {
			return nil, err
		}
		for i, c := range sink.Schema() {
			name := c.Name
			if i < len(v.Columns) {
				name = v.Columns[i]
			}
			tt := c.Type
			tt.NotNull = false
			typ := tt.String()
			if planner.IsProctimeColumn(sink.Input, i) {
				typ += " *PROCTIME*"
			}
			r.Rows = append(r.Rows, []types.Value{name, typ, !c.Type.NotNull, nil, nil, nil})
		}
		return r, nil
	}
	hint := ""
	if m := catalog.Closest(st.Name, s.cat.Names()); m != "" {
		hint = fmt.Sprintf("did you mean '%s'?", m)
	}
	pos := st.Pos()
	if p, ok := sql.FindIdent(st, st.Name); ok {
		pos = p
	}
	return nil, &sql.Error{Pos: pos, Msg: fmt.Sprintf("table or view '%s' does not exist", st.Name), Hint: hint}
}

// plan plans a query, insert or statement set into its sinks and DAG.
func (s *Session) plan(ctx context.Context, st sql.Statement) ([]*planner.Sink, *planner.Graph, error) {
	p, err := s.planner(st)
	if err != nil {
		return nil, nil, err
	}
	p.Ctx = ctx
	var sinks []*planner.Sink
	switch st := st.(type) {
	case *sql.Select:
		sink, err := p.Query(st, st.Query)
		if err != nil {
			return nil, nil, err
		}
		sinks = append(sinks, sink)
	case *sql.Insert:
		sink, err := p.Insert(st)
		if err != nil {
			return nil, nil, err
		}
		sinks = append(sinks, sink)
	case *sql.StatementSet:
		for _, ins := range st.Inserts {
			sink, err := p.Insert(ins)
			if err != nil {
				return nil, nil, err
			}
			sinks = append(sinks, sink)
		}
	default:
		return nil, nil, sql.Errorf(st.Pos(), "cannot plan %T", st)
	}
	g, err := p.Physical(sinks)
	if err != nil {
		return nil, nil, sql.Errorf(st.Pos(), "%v", err)
	}
	return sinks, g, nil
}

func (s *Session) explain(ctx context.Context, st *sql.Explain) (*Result, error) {
	sinks, g, err := s.plan(ctx, st.Stmt)
	if err != nil {
		return nil, err
	}
	return &Result{Kind: ResultText, Text: planner.Explain(sinks, g)}, nil
}

// EventTimeField is Arroyo's table option naming the event-time column
// ('event_time_field' = 'ts'). Without a WATERMARK FOR clause it stands for
// WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, Arroyo's default watermark.
// It is not passed on to the connector.
const EventTimeField = "event_time_field"

// eventTimeOption is EventTimeField's definition (for the docs; its value
// is checked against the table's columns).
var eventTimeOption = config.String(EventTimeField, "",
	"Arroyo's: names the event-time column, standing for WATERMARK FOR c AS c - INTERVAL '1' SECOND; not passed to the connector").
	Allows("a TIMESTAMP column of the table")

func eventTimeField(t *catalog.Table, st *sql.CreateTable, o sql.Option) error {
	if st.Watermark != nil {
		return &sql.Error{Pos: o.Pos, Msg: "'event_time_field' and WATERMARK FOR both name the event time", Hint: "keep one of them"}
	}
	bad := &config.Error{Key: EventTimeField, Value: o.Value, Allowed: eventTimeOption.Allowed()}
	i := t.Columns.Index(o.Value)
	if i < 0 {
		return &sql.Error{Pos: o.Pos, Msg: bad.Error(), Hint: fmt.Sprintf("'%s' is not a column of '%s'", o.Value, st.Name)}
	}
	if t.Columns[i].Type.Kind != types.Timestamp {
		return &sql.Error{Pos: o.Pos, Msg: bad.Error(), Hint: fmt.Sprintf("'%s' is %s: declare it TIMESTAMP(3)", o.Value, t.Columns[i].Type)}
	}
	name := t.Columns[i].Name
	quoted := "`" + strings.ReplaceAll(name, "`", "``") + "`"
	t.WatermarkColumn, t.WatermarkExpr = name, quoted+" - INTERVAL '1' SECOND"
	return nil
}

// refuseUnkept refuses what a column definition may say that the catalog
// does not keep (rather than accept it and drop it): a METADATA column
// and a COMMENT.
func refuseUnkept(c sql.ColumnDef) error {
	if c.Metadata != "" {
		return &sql.Error{Pos: c.Pos, Msg: fmt.Sprintf("metadata columns are not supported (column '%s'): no connector exposes its records' metadata", c.Name),
			Hint: "declare it as a physical column, or leave it out"}
	}
	if c.Comment != "" {
		return &sql.Error{Pos: c.Pos, Msg: fmt.Sprintf("column comments are not kept in the catalog (column '%s')", c.Name),
			Hint: "leave out COMMENT '...'"}
	}
	return nil
}
