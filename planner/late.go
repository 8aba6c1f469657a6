package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Late records:
//
//	SET 'table.exec.late-records.table' = 'clicks_late';
//
// A window aggregation drops a record whose every window already fired
// (its event time is behind the watermark). With this option set, it
// routes such records to the named table instead: an ordinary sink table
// of any connector, written exactly-once with the job's checkpoints like
// the job's other sinks. The option applies to every window aggregation
// (TUMBLE, HOP, CUMULATE, SESSION, GROUP BY TUMBLE(...)) planned while it
// is set.
//
// A late record is a row of the window's input: the relation named in
// TABLE(...) of a window table function, or the FROM (after WHERE) of a
// GROUP BY window. The table's columns are matched by name (regardless of
// case) with that input's columns, so a table with all of the input's
// columns receives the whole row and a table with some of them receives
// those; a table column the input lacks, or whose type the input's column
// cannot be implicitly cast to, is an error at plan time naming the column.
// Projection pruning keeps the matched columns flowing into the window
// operator.
//
// In the physical plan the window aggregate gets a second, side output (an
// Edge with Late set) that carries the late rows, with the schema of the
// window's input, to a Calc that fits them to the table and on to the
// table's Sink.

// OptLateRecordsTable is the option naming the table late records go to.
const OptLateRecordsTable = "table.exec.late-records.table"

// LateRecords routes the late records of a window aggregation to Table.
type LateRecords struct {
	Table *catalog.Table
	// Exprs compute Table's columns, in order, over a row of the window's
	// input (column references, implicitly cast where the types differ).
	Exprs []Expr
}

// remap returns l with its expressions' column references rewritten
// through m.
func (l *LateRecords) remap(m map[int]int) *LateRecords {
	if l == nil {
		return nil
	}
	out := &LateRecords{Table: l.Table}
	for _, e := range l.Exprs {
		out.Exprs = append(out.Exprs, remapColumns(e, m))
	}
	return out
}

// exprs are l's expressions (none without l).
func (l *LateRecords) exprs() []Expr {
	if l == nil {
		return nil
	}
	return l.Exprs
}

// withExprs returns l with its expressions replaced.
func (l *LateRecords) withExprs(es []Expr) *LateRecords {
	if l == nil {
		return nil
	}
	return &LateRecords{Table: l.Table, Exprs: es}
}

// columns returns the input columns l reads, in ascending order.
func (l *LateRecords) columns() []int {
	used := map[int]bool{}
	for _, e := range l.Exprs {
		columnsUsed(e, used)
	}
	var out []int
	for c := range used {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// lateRecords binds the late-records table of a window of the given kind
// over input (nil when the option is not set). pos is the window in the
// statement.
func (b *binder) lateRecords(input Node, kind string, pos sql.Pos) (*LateRecords, error) {
	name := strings.TrimSpace(b.p.Options.LateRecordsTable)
	if name == "" {
		return nil, nil
	}
	t, ok := b.p.Catalog.Table(name)
	if !ok {
		hint := "create it, or RESET '" + OptLateRecordsTable + "'"
		if m := catalog.Closest(name, b.p.Catalog.Names()); m != "" {
			hint = fmt.Sprintf("did you mean '%s'?", m)
		}
		return nil, errAt(ErrUnknownTable, pos, hint, "the late-records table '%s' of %s ('%s') does not exist", name, kind, OptLateRecordsTable)
	}
	if c, ok := catalog.LookupConnector(t.Connector); !ok || !c.Sink {
		return nil, errAt(ErrUnsupported, pos, "", "the late-records table '%s' of %s (connector '%s') cannot be written", t.Name, kind, t.Connector)
	}
	if ins, ok := b.stmt.(*sql.Insert); ok && strings.EqualFold(ins.Table, t.Name) {
		return nil, errAt(ErrUnsupported, pos, "route late records to a table of their own",
			"the late-records table '%s' of %s is the table the statement writes", t.Name, kind)
	}
	in := input.Schema()
	l := &LateRecords{Table: t}
	phys, _ := t.Physical()
	for _, col := range phys {
		j := -1
		for i, c := range in {
			if strings.EqualFold(c.Name, col.Name) {
				j = i
				break
			}
		}
		if j < 0 {
			return nil, errAt(ErrUnknownColumn, pos, "its columns are matched by name with the window's input: "+strings.Join(in.Names(), ", "),
				"the late-records table '%s' has a column '%s' that the input of %s lacks", t.Name, col.Name, kind)
		}
		var e Expr = &ColumnRef{Index: j, Name: in[j].Name, T: in[j].Type}
		if !in[j].Type.Equal(col.Type) {
			var err error
			if e, err = implicitCast(e, col.Type.Nullable()); err != nil {
				return nil, errAt(ErrTypeMismatch, pos, "declare the column "+in[j].Type.String()+" in the late-records table",
					"column '%s' of the late-records table '%s' is %s but the input of %s gives %s", col.Name, t.Name, col.Type, kind, in[j].Type)
			}
		}
		l.Exprs = append(l.Exprs, e)
	}
	return l, nil
}

// lateSchema is the row type of a late-records table.
func lateSchema(l *LateRecords) types.Schema { s, _ := l.Table.Physical(); return s }

// lateRouter is a spec whose operator routes late records to a table
// along a side output (the edges marked Late): l says where (nil: it drops
// them), input is the node whose rows they are.
type lateRouter interface {
	lateRecords() (l *LateRecords, input Node)
}

// buildLate adds the side output of operator w: a Calc fitting the late
// rows (of input) to the table (left out when they fit already), at w's
// parallelism. The table's sink is added by finishLate, once per table.
func (b *physBuilder) buildLate(w *Operator, l *LateRecords, input Node) {
	in := input.Schema()
	out := lateSchema(l)
	edge := Edge{From: w, Partition: Forward, Late: true}
	identity := len(l.Exprs) == len(in)
	for i, e := range l.Exprs {
		if c, ok := e.(*ColumnRef); !ok || c.Index != i || in[i].Name != out[i].Name {
			identity = false
		}
	}
	if !identity {
		logical := &Project{Input: input, Exprs: l.Exprs, Names: out.Names()}
		c := &Operator{Parallelism: w.Parallelism, Schema: logical.Schema(), Mode: AppendOnly,
			Spec: &CalcSpec{Projections: l.Exprs}, Inputs: []Edge{edge}}
		c = b.add(c, "late-records calc|"+w.ID)
		edge = Edge{From: c, Partition: Forward}
	}
	key := strings.ToLower(l.Table.Name)
	if _, ok := b.late[key]; !ok {
		b.lateTables = append(b.lateTables, l.Table)
	}
	b.late[key] = append(b.late[key], edge)
}

// finishLate adds one sink per late-records table: fed by the one window
// whose late records it takes, or by a Union of several, so that a table
// has one writer in a job.
func (b *physBuilder) finishLate(sinks []*Sink) error {
	for _, t := range b.lateTables {
		for _, s := range sinks {
			if s.Table != nil && strings.EqualFold(s.Table.Name, t.Name) {
				return fmt.Errorf("%w: table '%s' is both written by an INSERT of the job and its late-records table ('%s'); route late records to a table of their own",
					ErrUnsupported, t.Name, OptLateRecordsTable)
			}
		}
		phys, _ := t.Physical()
		edges := b.late[strings.ToLower(t.Name)]
		in := edges[0]
		par := in.From.Parallelism
		if len(edges) > 1 {
			u := &Operator{Spec: &UnionSpec{}, Parallelism: b.par, Schema: phys, Mode: AppendOnly}
			for _, e := range edges {
				ue := b.edge(e.From, b.par)
				ue.Late = e.Late
				u.Inputs = append(u.Inputs, ue)
			}
			u = b.add(u, "late-records union|"+t.Name)
			in, par = Edge{From: u, Partition: Forward}, b.par
		}
		s := &Operator{Parallelism: par, Schema: phys, Mode: AppendOnly,
			Spec: &SinkSpec{Table: t, Name: t.Name}, Inputs: []Edge{in}}
		b.add(s, "late-records sink|"+t.Name)
	}
	return nil
}
