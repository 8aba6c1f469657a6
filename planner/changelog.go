package planner

import (
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/sql"
)

// Mode is the changelog mode of a node's output.
type Mode uint8

const (
	// AppendOnly streams only insert (+I) rows.
	AppendOnly Mode = iota
	// Updating streams may retract what they emitted (-U/+U/-D).
	Updating
)

func (m Mode) String() string {
	if m == Updating {
		return "[I,UB,UA,D]"
	}
	return "[I]"
}

// ModeOf infers the changelog mode of n's output from its inputs', by
// each node's Mode.
func ModeOf(n Node) Mode {
	ch := n.Children()
	in := make([]Mode, len(ch))
	for i, c := range ch {
		in[i] = ModeOf(c)
	}
	return n.Mode(in)
}

// anyUpdating is the mode of a node that passes its inputs' changes on:
// updating if any input is.
func anyUpdating(in []Mode) Mode {
	for _, m := range in {
		if m == Updating {
			return Updating
		}
	}
	return AppendOnly
}

// A scan is append-only unless its connector reads a changelog.
func (s *Scan) Mode([]Mode) Mode {
	if s.Updating {
		return Updating
	}
	return AppendOnly
}

// VALUES is append-only.
func (*Values) Mode([]Mode) Mode { return AppendOnly }

// Filters and projections keep their input's mode.
func (*Filter) Mode(in []Mode) Mode  { return anyUpdating(in) }
func (*Project) Mode(in []Mode) Mode { return anyUpdating(in) }

// A group aggregate (and DISTINCT) updates its results.
func (*Aggregate) Mode([]Mode) Mode { return Updating }

// A sort of a bounded input emits its final result once at the end of
// input, so it is append-only even over an updating input.
func (*Sort) Mode([]Mode) Mode { return AppendOnly }

// A union updates if any input does.
func (*Union) Mode(in []Mode) Mode { return anyUpdating(in) }

// A sink's rows are its input's.
func (*Sink) Mode(in []Mode) Mode { return anyUpdating(in) }

// UpsertKeyOf is the upsert key of n's output (Node.UpsertKey).
func UpsertKeyOf(n Node) []int {
	ch := n.Children()
	in := make([][]int, len(ch))
	for i, c := range ch {
		in[i] = UpsertKeyOf(c)
	}
	return n.UpsertKey(in)
}

// A scan's key is its table's PRIMARY KEY, when it reads all of its columns.
func (s *Scan) UpsertKey([][]int) []int {
	if len(s.Table.PrimaryKey) == 0 {
		return nil
	}
	var out []int
	for _, k := range s.Table.PrimaryKey {
		found := false
		for i, f := range s.Fields {
			if strings.EqualFold(s.Table.Columns[f].Name, k) {
				out, found = append(out, i), true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return out
}

// VALUES, sorts, unions and windows know no key.
func (*Values) UpsertKey([][]int) []int          { return nil }
func (*Sort) UpsertKey([][]int) []int            { return nil }
func (*Union) UpsertKey([][]int) []int           { return nil }
func (*WindowTVF) UpsertKey([][]int) []int       { return nil }
func (*WindowAggregate) UpsertKey([][]int) []int { return nil }

// Filters and sinks keep their input's key.
func (*Filter) UpsertKey(in [][]int) []int { return in[0] }
func (*Sink) UpsertKey(in [][]int) []int   { return in[0] }

// A projection keeps its input's key if it passes every key column on.
func (p *Project) UpsertKey(in [][]int) []int {
	if in[0] == nil {
		return nil
	}
	out := []int{}
	for _, k := range in[0] {
		found := false
		for i, e := range p.Exprs {
			if c, ok := e.(*ColumnRef); ok && c.Index == k {
				out, found = append(out, i), true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return out
}

// A group aggregate's key is its grouping columns (its first columns).
func (a *Aggregate) UpsertKey([][]int) []int {
	out := make([]int, len(a.Keys))
	for i := range out {
		out[i] = i
	}
	return out
}

// producer names the node that makes n updating, for error messages: the
// kind of the first updating node none of whose inputs updates.
func producer(n Node) string {
	for _, c := range n.Children() {
		if ModeOf(c) == Updating {
			return producer(c)
		}
	}
	if a, ok := n.(*Aggregate); ok && a.setOp != "" {
		return a.setOp
	}
	d := n.Describe()
	if i := strings.IndexByte(d, '('); i >= 0 {
		d = d[:i]
	}
	return d
}

// checkModes rejects plans Flink rejects: an updating stream into an
// append-only sink, and ORDER BY/LIMIT over an unbounded input.
func checkModes(s *Sink, stmt sql.Statement) error {
	err := Inspect(s, func(n Node) error {
		if so, ok := n.(*Sort); ok && !IsBounded(so.Input) {
			return errAt(ErrUnsupported, stmt.Pos(), "ORDER BY and LIMIT need bounded input (e.g. 'number-of-rows' for datagen)",
				"ORDER BY / LIMIT on an unbounded stream is not supported")
		}
		// Session windows (session_window.go).
		if err := checkSessionNode(n, stmt); err != nil {
			return err
		}
		// Row numbers (rank.go).
		if err := checkRankNode(n, stmt); err != nil {
			return err
		}
		return checkCurrentWatermark(n, stmt)
	})
	if err != nil {
		return err
	}
	if s.Table == nil || ModeOf(s.Input) == AppendOnly {
		return nil
	}
	pos := stmt.Pos()
	if ins, ok := stmt.(*sql.Insert); ok {
		pos = ins.TablePos
	}
	if s.Table.AppendOnly {
		return errAt(ErrUpdatingToSink, pos, "make the query append-only, or write to a table declared without APPEND ONLY",
			"table '%s' is APPEND ONLY but the query produces updates (from %s)", s.Table.Name, producer(s.Input))
	}
	c, ok := catalog.LookupConnector(s.Table.Connector)
	if ok && !c.SinkAcceptsUpdates(s.Table.Options) {
		return errAt(ErrUpdatingToSink, pos, "write to a sink that accepts updates (upsert-kafka, print, or a filesystem sink with format 'debezium-json'), or make the query append-only",
			"table sink '%s' (connector '%s') is append-only but the query produces updates (from %s)", s.Table.Name, s.Table.Connector, producer(s.Input))
	}
	if ok && c.WritesByKey && len(s.Table.PrimaryKey) == 0 {
		return errAt(ErrUpdatingToSink, pos, "declare the PRIMARY KEY (...) NOT ENFORCED of the table (the columns the query groups by, say), or make the query append-only",
			"table sink '%s' (connector '%s') has no PRIMARY KEY, but the query produces updates (from %s), which it writes by key", s.Table.Name, s.Table.Connector, producer(s.Input))
	}
	if ok && c.WritesByKey {
		return checkSinkKey(s, pos)
	}
	return nil
}

// checkSinkKey refuses an updating query into a sink that keeps one value
// per primary key (catalog.Connector.WritesByKey) unless the primary key
// contains a key of the query's rows (UpsertKeyOf): else two rows of one
// primary key would replace each other in the sink, and the retraction of
// one would delete the other.
func checkSinkKey(s *Sink, pos sql.Pos) error {
	sch := s.Input.Schema()
	var pk []int
	for _, k := range s.Table.PrimaryKey {
		for i, c := range sch {
			if strings.EqualFold(c.Name, k) {
				pk = append(pk, i)
				break
			}
		}
	}
	uk := UpsertKeyOf(s.Input)
	if len(pk) == 0 || (uk != nil && containsAll(pk, uk)) {
		return nil
	}
	why := "the query's rows have no key (a join of inputs without keys, say)"
	if uk != nil {
		var names []string
		for _, k := range uk {
			names = append(names, sch[k].Name)
		}
		why = "the query's rows are keyed by (" + strings.Join(names, ", ") + ")"
	}
	return errAt(ErrUpdatingToSink, pos, "make the primary key the columns the query groups by (or joins on the unique keys of), or group the result by the primary key",
		"table sink '%s' keeps one row per PRIMARY KEY (%s), but %s: two rows with the same primary key would overwrite each other", s.Table.Name, strings.Join(s.Table.PrimaryKey, ", "), why)
}
