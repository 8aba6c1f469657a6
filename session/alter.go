package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Changing a table: CREATE OR REPLACE TABLE and ALTER TABLE (Flink's
// forms). A table that a running job of the session reads or writes is
// not changed (the job planned it as it was; a restart would read it
// otherwise): the error names the jobs. The changed definition goes
// through the checks of CREATE TABLE (types, computed columns, primary
// key, watermark, the connector's options and Validate, the allowed
// directories) and, for a table that can be read, the planning of a scan
// of it; a change that fails them is refused and the table stays as it
// was.

// jobsUsing describes the running jobs of the session that read or write
// the table called name: "job 'n' (id i) reads it", one a job.
func (s *Session) jobsUsing(name string) []string {
	var out []string
	for _, e := range s.jobs.all() {
		select {
		case <-e.done:
			continue
		default:
		}
		reads, writes := false, false
		for _, op := range e.graph.Operators {
			switch sp := op.Spec.(type) {
			case *planner.SourceSpec:
				reads = reads || strings.EqualFold(sp.Scan.Table.Name, name)
			case *planner.LookupJoinSpec:
				reads = reads || strings.EqualFold(sp.Scan.Table.Name, name)
			case *planner.SinkSpec:
				writes = writes || (sp.Table != nil && strings.EqualFold(sp.Table.Name, name))
			}
		}
		verb := ""
		switch {
		case reads && writes:
			verb = "reads and writes"
		case reads:
			verb = "reads"
		case writes:
			verb = "writes"
		default:
			continue
		}
		out = append(out, fmt.Sprintf("job '%s' (id %s) %s it", e.name, e.id, verb))
	}
	return out
}

// refuseInUse is the error for changing table name while jobs use it
// (nil when none does).
func (s *Session) refuseInUse(pos sql.Pos, what, name string) error {
	users := s.jobsUsing(name)
	if len(users) == 0 {
		return nil
	}
	return &sql.Error{Pos: pos, Msg: fmt.Sprintf("cannot %s table '%s' while a running job uses it: %s", what, name, strings.Join(users, "; ")),
		Hint: "STOP JOB 'id' (WITH SAVEPOINT to resume it later) first"}
}

// replaceTable is CREATE OR REPLACE TABLE, with t built from st as CREATE
// TABLE builds it. A table created without WITH keeps its rows in the
// data directory: replaced by another definition, it loses them (it is a
// new table, as in Flink, where the statement drops and creates it); with
// the same definition nothing changes.
func (s *Session) replaceTable(st *sql.CreateTable, t *catalog.Table) (*Result, error) {
	if old, ok := s.cat.Table(st.Name); ok && !sameDefinition(old, t) {
		if err := s.refuseInUse(st.NamePos, "replace", old.Name); err != nil {
			return nil, err
		}
	}
	old, err := s.cat.ReplaceTable(t)
	if errors.Is(err, catalog.ErrSameDefinition) {
		return &Result{Message: "[INFO] Table " + t.Name + " already exists with this definition."}, nil
	}
	if errors.Is(err, catalog.ErrTableExists) {
		return nil, &sql.Error{Pos: st.NamePos, Msg: err.Error()}
	}
	if err != nil {
		return nil, optionPlaced(st.Pos(), st.Options, err)
	}
	if old != nil {
		s.dropIndexesOf(old.Name)
		if c, ok := catalog.LookupConnector(old.Connector); ok && c.Drop != nil {
			if err := c.Drop(s.path(), old.PhysicalTable()); err != nil {
				return nil, sql.Errorf(st.Pos(), "table %s replaced, but the rows of the table it replaced were not all removed: %v", t.Name, err)
			}
		}
	}
	if old == nil {
		return created("Table", t.Name, false), nil
	}
	return &Result{Message: fmt.Sprintf("[INFO] Table '%s' replaced.", brief(t.Name))}, nil
}

// replaceView is CREATE OR REPLACE VIEW, with v built from st (whose
// query planned). A view whose new query reads the view itself (or a view
// that reads it) is refused and the old one stays.
func (s *Session) replaceView(st *sql.CreateView, v *catalog.View) (*Result, error) {
	old, _ := s.cat.View(v.Name)
	err := s.cat.ReplaceView(v)
	if errors.Is(err, catalog.ErrSameDefinition) {
		return &Result{Message: "[INFO] View " + v.Name + " already exists with this definition."}, nil
	}
	if err != nil {
		return nil, &sql.Error{Pos: st.NamePos, Msg: err.Error()}
	}
	if old == nil {
		return created("View", v.Name, false), nil
	}
	stmts, err := sql.Parse("SELECT * FROM `" + strings.ReplaceAll(v.Name, "`", "``") + "`")
	if err == nil {
		var p *planner.Planner
		if p, err = s.planner(st); err == nil {
			_, err = p.Query(stmts[0], stmts[0].(*sql.Select).Query)
		}
	}
	if err != nil {
		if rerr := s.cat.ReplaceView(old); rerr != nil && !errors.Is(rerr, catalog.ErrSameDefinition) {
			return nil, sql.Errorf(st.Pos(), "view %s as replaced cannot be read (%s), and putting the old one back failed: %v", v.Name, message(err), rerr)
		}
		return nil, sql.Errorf(st.Pos(), "view %s as replaced cannot be read, so it is kept as it was: %s", v.Name, message(err))
	}
	return &Result{Message: fmt.Sprintf("[INFO] View '%s' replaced.", brief(v.Name))}, nil
}

func sameDefinition(a, b *catalog.Table) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// optionPlaced places a catalog error at the option it names, if any, or
// at pos.
func optionPlaced(pos sql.Pos, opts []sql.Option, err error) error {
	for _, o := range opts {
		if strings.Contains(err.Error(), "'"+o.Key+"'") {
			pos = o.Pos
		}
	}
	return &sql.Error{Pos: pos, Msg: err.Error()}
}

// alterTable runs ALTER TABLE.
func (s *Session) alterTable(st *sql.AlterTable) (*Result, error) {
	old, found := s.cat.Table(st.Name)
	if !found {
		if _, view := s.cat.View(st.Name); view {
			return nil, &sql.Error{Pos: st.NamePos, Msg: fmt.Sprintf("'%s' is a view: ALTER TABLE changes tables", st.Name),
				Hint: "CREATE OR REPLACE VIEW replaces a view"}
		}
		if st.IfExists {
			return &Result{Message: fmt.Sprintf("[INFO] Table '%s' does not exist: nothing altered.", brief(st.Name))}, nil
		}
		hint := "use ALTER TABLE IF EXISTS to ignore a missing one"
		if m := catalog.Closest(st.Name, s.cat.Tables()); m != "" {
			hint = fmt.Sprintf("did you mean '%s'?", m)
		}
		return nil, &sql.Error{Pos: st.NamePos, Msg: fmt.Sprintf("table '%s' does not exist", st.Name), Hint: hint}
	}
	what := "alter"
	if st.Kind == sql.AlterRenameTable {
		what = "rename"
	}
	if err := s.refuseInUse(st.NamePos, what, old.Name); err != nil {
		return nil, err
	}
	t, err := copyTable(old)
	if err != nil {
		return nil, sql.Errorf(st.Pos(), "%v", err)
	}
	a := &alteration{s: s, st: st, t: t}
	switch st.Kind {
	case sql.AlterSet:
		err = a.set()
	case sql.AlterReset:
		err = a.reset()
	case sql.AlterAdd, sql.AlterModify:
		err = a.items()
	case sql.AlterDrop:
		err = a.drop()
	case sql.AlterRenameColumn:
		err = a.renameColumn()
	case sql.AlterRenameTable:
		if !strings.EqualFold(st.To.Name, old.Name) {
			if _, ok := s.cat.Table(st.To.Name); ok {
				return nil, sql.Errorf(st.To.Pos, "table '%s' already exists", st.To.Name)
			}
			if _, ok := s.cat.View(st.To.Name); ok {
				return nil, sql.Errorf(st.To.Pos, "a view called '%s' already exists", st.To.Name)
			}
		}
		t.Name = st.To.Name
	}
	if err != nil {
		return nil, err
	}
	if err := a.check(old); err != nil {
		return nil, err
	}
	if err := s.cat.AlterTable(old.Name, t); err != nil {
		return nil, optionPlaced(st.Pos(), st.Options, err)
	}
	if st.Kind == sql.AlterRenameTable {
		return &Result{Message: fmt.Sprintf("[INFO] Table '%s' renamed to '%s'.", brief(old.Name), brief(t.Name))}, nil
	}
	return &Result{Message: fmt.Sprintf("[INFO] Table '%s' altered.", brief(t.Name))}, nil
}

// copyTable returns a deep copy of t.
func copyTable(t *catalog.Table) (*catalog.Table, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var c catalog.Table
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	if c.Options == nil {
		c.Options = map[string]string{}
	}
	return &c, nil
}

// alteration is an ALTER TABLE being applied to t, a copy of the table.
type alteration struct {
	s  *Session
	st *sql.AlterTable
	t  *catalog.Table
	// added are the computed columns of this statement (their expressions
	// have positions in it), by lower-cased name.
	added map[string]*sql.ColumnDef
	// wmPos and pkPos are where this statement defines the watermark and
	// the primary key, if it does (errors about them go there).
	wmPos, pkPos *sql.Pos
}

// at returns *p, or the statement's start when p is nil.
func (a *alteration) at(p *sql.Pos) sql.Pos {
	if p != nil {
		return *p
	}
	return a.st.Pos()
}

func (a *alteration) set() error {
	for _, o := range a.st.Options {
		switch {
		case o.Key == "connector":
			a.t.Connector = o.Value
		case strings.EqualFold(o.Key, EventTimeField):
			return &sql.Error{Pos: o.Pos, Msg: fmt.Sprintf("'%s' is read by CREATE TABLE only", EventTimeField),
				Hint: "ALTER TABLE t ADD WATERMARK FOR c AS c - INTERVAL '1' SECOND says the same"}
		default:
			a.t.Options[o.Key] = o.Value
		}
	}
	return nil
}

func (a *alteration) reset() error {
	for _, k := range a.st.Keys {
		if k.Name == "connector" {
			return &sql.Error{Pos: k.Pos, Msg: "'connector' cannot be reset", Hint: "ALTER TABLE t SET ('connector' = '...') changes it"}
		}
		if _, set := a.t.Options[k.Name]; !set {
			e := &sql.Error{Pos: k.Pos, Msg: fmt.Sprintf("option '%s' is not set on table '%s'", k.Name, a.t.Name)}
			var keys []string
			for o := range a.t.Options {
				keys = append(keys, o)
			}
			if m := catalog.Closest(k.Name, keys); m != "" {
				e.Hint = fmt.Sprintf("did you mean '%s'?", m)
			}
			return e
		}
		delete(a.t.Options, k.Name)
	}
	return nil
}

// unknownColumn is the error for a column name t lacks.
func (a *alteration) unknownColumn(name string, pos sql.Pos) error {
	e := &sql.Error{Pos: pos, Msg: fmt.Sprintf("column '%s' is not a column of '%s'", name, a.t.Name)}
	if m := catalog.Closest(name, a.t.Columns.Names()); m != "" {
		e.Hint = fmt.Sprintf("did you mean '%s'?", m)
	}
	return e
}

// items applies the items of ADD or MODIFY, in order.
func (a *alteration) items() error {
	add := a.st.Kind == sql.AlterAdd
	for _, it := range a.st.Items {
		switch {
		case it.Column != nil:
			if err := a.column(it, add); err != nil {
				return err
			}
		case it.Watermark != nil:
			if add && a.t.WatermarkExpr != "" {
				return &sql.Error{Pos: it.Pos, Msg: fmt.Sprintf("table '%s' already has a WATERMARK (for '%s')", a.t.Name, a.t.WatermarkColumn),
					Hint: "ALTER TABLE ... MODIFY WATERMARK FOR ... changes it"}
			}
			if !add && a.t.WatermarkExpr == "" {
				return &sql.Error{Pos: it.Pos, Msg: fmt.Sprintf("table '%s' has no WATERMARK to modify", a.t.Name), Hint: "ALTER TABLE ... ADD WATERMARK FOR ... adds one"}
			}
			a.t.WatermarkColumn, a.t.WatermarkExpr = it.Watermark.Column, it.Watermark.ExprText
			a.wmPos = &it.Watermark.Pos
		default:
			if add && len(a.t.PrimaryKey) > 0 {
				return &sql.Error{Pos: it.Pos, Msg: fmt.Sprintf("table '%s' already has a PRIMARY KEY (%s)", a.t.Name, strings.Join(a.t.PrimaryKey, ", ")),
					Hint: "ALTER TABLE ... MODIFY PRIMARY KEY (...) NOT ENFORCED changes it"}
			}
			if !add && len(a.t.PrimaryKey) == 0 {
				return &sql.Error{Pos: it.Pos, Msg: fmt.Sprintf("table '%s' has no PRIMARY KEY to modify", a.t.Name), Hint: "ALTER TABLE ... ADD PRIMARY KEY (...) NOT ENFORCED adds one"}
			}
			for _, k := range it.PrimaryKey {
				i := a.t.Columns.Index(k)
				if i < 0 {
					return a.unknownColumn(k, it.Pos)
				}
				if _, computed := a.t.ComputedExpr(k); computed {
					return sql.Errorf(it.Pos, "PRIMARY KEY column '%s' of '%s' is a computed column", k, a.t.Name)
				}
			}
			a.t.PrimaryKey = nil
			a.pkPos = &it.Pos
			for _, k := range it.PrimaryKey {
				i := a.t.Columns.Index(k)
				if slices.Contains(a.t.PrimaryKey, a.t.Columns[i].Name) {
					return sql.Errorf(it.Pos, "PRIMARY KEY names column '%s' twice", k)
				}
				a.t.Columns[i].Type.NotNull = true
				a.t.PrimaryKey = append(a.t.PrimaryKey, a.t.Columns[i].Name)
			}
		}
	}
	return nil
}

// column adds (or, MODIFY, redefines) the column of it.
func (a *alteration) column(it sql.SchemaItem, add bool) error {
	c := it.Column
	if err := refuseUnkept(*c); err != nil {
		return err
	}
	at := a.t.Columns.Index(c.Name)
	switch {
	case add && at >= 0:
		return &sql.Error{Pos: c.Pos, Msg: fmt.Sprintf("column '%s' already exists in table '%s'", c.Name, a.t.Name),
			Hint: "ALTER TABLE ... MODIFY changes a column"}
	case !add && at < 0:
		return a.unknownColumn(c.Name, c.Pos)
	}
	col := types.Column{Name: c.Name}
	if c.Expr == nil {
		typ, err := planner.TypeFromName(c.Type)
		if err != nil {
			return err
		}
		typ.NotNull = c.NotNull
		col.Type = typ
	}
	// Take the old definition out.
	a.t.Computed = slices.DeleteFunc(a.t.Computed, func(cc catalog.ComputedColumn) bool { return strings.EqualFold(cc.Name, c.Name) })
	if at >= 0 {
		a.t.Columns = slices.Delete(a.t.Columns, at, at+1)
	}
	if c.Expr != nil {
		a.t.Computed = append(a.t.Computed, catalog.ComputedColumn{Name: c.Name, Expr: c.ExprText})
		if a.added == nil {
			a.added = map[string]*sql.ColumnDef{}
		}
		a.added[strings.ToLower(c.Name)] = c
	}
	// Where it goes: FIRST, AFTER c, where it was (MODIFY), or last (ADD).
	switch {
	case it.First:
		at = 0
	case it.After != "":
		i := a.t.Columns.Index(it.After)
		if i < 0 {
			if strings.EqualFold(it.After, c.Name) {
				return sql.Errorf(it.AfterPos, "column '%s' cannot be placed after itself", c.Name)
			}
			return a.unknownColumn(it.After, it.AfterPos)
		}
		at = i + 1
	case add:
		at = len(a.t.Columns)
	}
	a.t.Columns = slices.Insert(a.t.Columns, at, col)
	return nil
}

// drop applies DROP.
func (a *alteration) drop() error {
	st, t := a.st, a.t
	switch {
	case st.DropPrimaryKey:
		if len(t.PrimaryKey) == 0 {
			return sql.Errorf(st.Pos(), "table '%s' has no PRIMARY KEY to drop", t.Name)
		}
		t.PrimaryKey = nil
		return nil
	case st.DropWatermark:
		if t.WatermarkExpr == "" {
			return sql.Errorf(st.Pos(), "table '%s' has no WATERMARK to drop", t.Name)
		}
		t.WatermarkColumn, t.WatermarkExpr = "", ""
		return nil
	}
	dropped := map[string]bool{}
	for _, c := range st.Columns {
		if t.Columns.Index(c.Name) < 0 {
			return a.unknownColumn(c.Name, c.Pos)
		}
		if dropped[strings.ToLower(c.Name)] {
			return sql.Errorf(c.Pos, "column '%s' is named twice", c.Name)
		}
		dropped[strings.ToLower(c.Name)] = true
	}
	if len(dropped) == len(t.Columns) {
		return sql.Errorf(st.Pos(), "cannot drop every column of '%s'", t.Name)
	}
	for _, c := range st.Columns {
		if err := a.unused(c, "drop", "", dropped); err != nil {
			return err
		}
	}
	t.Columns = slices.DeleteFunc(t.Columns, func(c types.Column) bool { return dropped[strings.ToLower(c.Name)] })
	t.Computed = slices.DeleteFunc(t.Computed, func(c catalog.ComputedColumn) bool { return dropped[strings.ToLower(c.Name)] })
	return nil
}

// unused refuses to drop (or rename) column c while the primary key, the
// partition keys, the watermark or a computed column (other than those in
// except, dropped together with it) use it. A rename changes the keys and
// the watermark's column along: only expressions stop it.
func (a *alteration) unused(c sql.Ident, verb, hint string, except map[string]bool) error {
	t := a.t
	refused := func(format string, args ...any) error {
		return &sql.Error{Pos: c.Pos, Msg: fmt.Sprintf("cannot %s column '%s' of '%s': ", verb, c.Name, t.Name) + fmt.Sprintf(format, args...), Hint: hint}
	}
	if verb == "drop" {
		for _, k := range t.PrimaryKey {
			if strings.EqualFold(k, c.Name) {
				return &sql.Error{Pos: c.Pos, Msg: fmt.Sprintf("cannot drop column '%s' of '%s': it is in the PRIMARY KEY (%s)", c.Name, t.Name, strings.Join(t.PrimaryKey, ", ")),
					Hint: "ALTER TABLE ... DROP PRIMARY KEY first, or MODIFY PRIMARY KEY without it"}
			}
		}
		for _, k := range t.PartitionKeys {
			if strings.EqualFold(k, c.Name) {
				return refused("it is a PARTITIONED BY column")
			}
		}
		if strings.EqualFold(t.WatermarkColumn, c.Name) {
			return &sql.Error{Pos: c.Pos, Msg: fmt.Sprintf("cannot drop column '%s' of '%s': it is the WATERMARK's column", c.Name, t.Name),
				Hint: "ALTER TABLE ... DROP WATERMARK first"}
		}
	}
	if t.WatermarkExpr != "" && exprReads(t.WatermarkExpr, t.Name, c.Name) {
		return &sql.Error{Pos: c.Pos, Msg: fmt.Sprintf("cannot %s column '%s' of '%s': the WATERMARK expression %s reads it", verb, c.Name, t.Name, t.WatermarkExpr),
			Hint: "ALTER TABLE ... MODIFY WATERMARK (or DROP WATERMARK) first"}
	}
	for _, cc := range t.Computed {
		if except[strings.ToLower(cc.Name)] {
			continue
		}
		if exprReads(cc.Expr, t.Name, c.Name) {
			return &sql.Error{Pos: c.Pos, Msg: fmt.Sprintf("cannot %s column '%s' of '%s': the computed column '%s' AS %s reads it", verb, c.Name, t.Name, cc.Name, cc.Expr),
				Hint: "ALTER TABLE ... MODIFY (or DROP) that column first"}
		}
	}
	return nil
}

// exprReads reports whether the expression text reads column name of
// table (unqualified, qualified by the table, or a field of it, name.f).
// An expression that does not parse is taken to read it.
func exprReads(text, table, name string) bool {
	stmts, err := sql.Parse("SELECT " + text)
	if err != nil || len(stmts) != 1 {
		return true
	}
	sel, ok := stmts[0].(*sql.Select)
	if !ok {
		return true
	}
	v := &columnFinder{table: table, name: name}
	sel.Query.Accept(v)
	return v.found
}

type columnFinder struct {
	table, name string
	found       bool
}

func (v *columnFinder) Enter(n ast.Node) (ast.Node, bool) {
	if c, ok := n.(*ast.ColumnNameExpr); ok {
		q := c.Name.Table.O
		if (strings.EqualFold(c.Name.Name.O, v.name) && (q == "" || strings.EqualFold(q, v.table))) || strings.EqualFold(q, v.name) {
			v.found = true
		}
	}
	return n, v.found
}

func (v *columnFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// renameColumn applies RENAME old TO new.
func (a *alteration) renameColumn() error {
	st, t := a.st, a.t
	i := t.Columns.Index(st.From.Name)
	if i < 0 {
		return a.unknownColumn(st.From.Name, st.From.Pos)
	}
	if j := t.Columns.Index(st.To.Name); j >= 0 && j != i {
		return sql.Errorf(st.To.Pos, "column '%s' already exists in table '%s'", st.To.Name, t.Name)
	}
	if err := a.unused(st.From, "rename", "", nil); err != nil {
		return err
	}
	from := t.Columns[i].Name
	t.Columns[i].Name = st.To.Name
	rename := func(s string) string {
		if strings.EqualFold(s, from) {
			return st.To.Name
		}
		return s
	}
	for k := range t.PrimaryKey {
		t.PrimaryKey[k] = rename(t.PrimaryKey[k])
	}
	for k := range t.PartitionKeys {
		t.PartitionKeys[k] = rename(t.PartitionKeys[k])
	}
	for k := range t.Computed {
		t.Computed[k].Name = rename(t.Computed[k].Name)
	}
	if t.WatermarkColumn != "" {
		t.WatermarkColumn = rename(t.WatermarkColumn)
	}
	return nil
}

// check runs the checks of CREATE TABLE on the changed table: the types of
// its computed columns (again: the columns they read may have changed),
// one PROCTIME() column, the primary key, the watermark; the allowed
// directories; a table that keeps its rows in the data directory keeps
// their layout; and, for a table that can be read, the planning of a
// scan of it. The options are checked by the catalog as it stores it.
func (a *alteration) check(old *catalog.Table) error {
	st, t := a.st, a.t
	p, err := a.s.planner(st)
	if err != nil {
		return err
	}
	proctime := ""
	for _, cc := range t.Computed {
		i := t.Columns.Index(cc.Name)
		var typ types.T
		var expr ast.ExprNode
		if c := a.added[strings.ToLower(cc.Name)]; c != nil {
			expr = c.Expr
			if typ, err = p.ComputedColumnType(st, t, c.Expr); err != nil {
				return err
			}
		} else {
			sel, e, perr := planner.ParseColumnExpr(cc.Expr)
			if perr != nil {
				return sql.Errorf(st.Pos(), "computed column '%s' AS %s: %v", cc.Name, cc.Expr, perr)
			}
			expr = e
			if typ, err = p.ComputedColumnType(sel, t, e); err != nil {
				return sql.Errorf(st.Pos(), "computed column '%s' AS %s: %s", cc.Name, cc.Expr, message(err))
			}
		}
		if planner.IsProctimeCall(expr) {
			if proctime != "" {
				return sql.Errorf(st.Pos(), "a table can have only one PROCTIME() column ('%s' is one)", proctime)
			}
			proctime = cc.Name
		}
		t.Columns[i].Type = typ
	}
	if w := t.WatermarkColumn; w != "" {
		i := t.Columns.Index(w)
		if i < 0 {
			return a.unknownColumn(w, a.at(a.wmPos))
		}
		t.WatermarkColumn = t.Columns[i].Name
		if strings.EqualFold(w, proctime) {
			return sql.Errorf(a.at(a.wmPos), "WATERMARK FOR column '%s': a watermark cannot be defined for a processing-time attribute (PROCTIME())", w)
		}
		if t.Columns[i].Type.Kind != types.Timestamp {
			return &sql.Error{Pos: a.at(a.wmPos), Msg: fmt.Sprintf("WATERMARK FOR column '%s' must be a TIMESTAMP, it is %s", w, t.Columns[i].Type), Hint: "declare it TIMESTAMP(3)"}
		}
	}
	for _, k := range t.PrimaryKey {
		i := t.Columns.Index(k)
		if _, computed := t.ComputedExpr(k); computed {
			return sql.Errorf(a.at(a.pkPos), "PRIMARY KEY column '%s' of '%s' is a computed column", k, t.Name)
		}
		t.Columns[i].Type.NotNull = true
	}
	for _, k := range t.PartitionKeys {
		if _, computed := t.ComputedExpr(k); computed {
			return sql.Errorf(st.Pos(), "PARTITIONED BY column '%s' of '%s' is a computed column", k, t.Name)
		}
	}
	if err := a.s.checkTablePaths(t.Connector, t.Options); err != nil {
		return optionPlaced(st.Pos(), st.Options, err)
	}
	if err := keepsLayout(old, t); err != nil {
		return &sql.Error{Pos: st.Pos(), Msg: err.Error(), Hint: "CREATE OR REPLACE TABLE replaces it (with no rows)"}
	}
	// The options (the catalog checks them again as it stores the table)
	// before the scan, which would fail on them less clearly.
	if err := catalog.CheckOptions(t); err != nil {
		return optionPlaced(st.Pos(), st.Options, err)
	}
	if c, ok := catalog.LookupConnector(t.Connector); ok && c.Source {
		if err := scanCheck(p, t); err != nil {
			return sql.Errorf(a.at(a.wmPos), "table '%s' as changed cannot be read: %s", t.Name, message(err))
		}
	}
	return nil
}

// keepsLayout refuses a change of the columns, primary key, watermark,
// connector or name of a table whose connector keeps its rows in the data
// directory (a table created without WITH): its rows are stored in the
// old layout, by the table's name.
func keepsLayout(old, t *catalog.Table) error {
	c, ok := catalog.LookupConnector(old.Connector)
	if !ok || (c.Drop == nil && c.Change == nil) {
		return nil
	}
	layout := func(t *catalog.Table) string {
		phys, _ := t.Physical()
		b, _ := json.Marshal([]any{phys, t.PrimaryKey, t.WatermarkColumn, t.Connector, strings.ToLower(t.Name)})
		return string(b)
	}
	if layout(old) != layout(t) {
		return fmt.Errorf("table '%s' keeps its rows in the data directory (it was created without WITH): "+
			"ALTER TABLE cannot change its physical columns, primary key, watermark, connector or name", old.Name)
	}
	return nil
}

// scanCheck plans SELECT * FROM t over a catalog that holds t alone: the
// watermark and computed columns bind, the options the planner reads
// parse.
func scanCheck(p *planner.Planner, t *catalog.Table) error {
	cat, err := catalog.Open("")
	if err != nil {
		return err
	}
	if err := cat.CreateTable(t, false); err != nil {
		return err
	}
	stmts, err := sql.Parse("SELECT * FROM `" + strings.ReplaceAll(t.Name, "`", "``") + "`")
	if err != nil {
		return err
	}
	q := *p
	q.Catalog = cat
	q.RunQuery = nil
	_, err = q.Query(stmts[0], stmts[0].(*sql.Select).Query)
	return err
}

// message is err's text without the position of a statement the user did
// not write.
func message(err error) string {
	var e *sql.Error
	if errors.As(err, &e) {
		if e.Hint != "" {
			return e.Msg + " (" + e.Hint + ")"
		}
		return e.Msg
	}
	return err.Error()
}
