package planner

import (
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

// ModeOf infers the changelog mode of n's output:
//   - scans and VALUES are append-only;
//   - filters and projections keep their input's mode;
//   - a group aggregate (and DISTINCT) updates its results;
//   - a sort of a bounded input emits its final result once at the end of
//     input, so it is append-only even over an updating input;
//   - a union updates if any input does.
func ModeOf(n Node) Mode {
	switch x := n.(type) {
	case *Scan:
		if x.Updating {
			return Updating
		}
		return AppendOnly
	case *Values:
		return AppendOnly
	case *Aggregate:
		return Updating
	case *Sort:
		return AppendOnly
	case *Union:
		for _, in := range x.Inputs {
			if ModeOf(in) == Updating {
				return Updating
			}
		}
		return AppendOnly
	}
	for _, c := range n.Children() {
		if ModeOf(c) == Updating {
			return Updating
		}
	}
	return AppendOnly
}

// producer names the node that makes n updating, for error messages.
func producer(n Node) string {
	switch x := n.(type) {
	case *Aggregate:
		if len(x.Aggs) == 0 {
			return "Distinct"
		}
		return "GroupAggregate"
	}
	for _, c := range n.Children() {
		if ModeOf(c) == Updating {
			return producer(c)
		}
	}
	return "?"
}

// checkModes rejects plans Flink rejects: an updating stream into an
// append-only sink, and ORDER BY/LIMIT over an unbounded input.
func checkModes(s *Sink, stmt sql.Statement) error {
	var err error
	var walk func(n Node)
	walk = func(n Node) {
		if err != nil {
			return
		}
		if so, ok := n.(*Sort); ok && !IsBounded(so.Input) {
			err = errAt(ErrUnsupported, stmt.Pos(), "ORDER BY and LIMIT need bounded input (e.g. 'number-of-rows' for datagen)",
				"ORDER BY / LIMIT on an unbounded stream is not supported")
			return
		}
		// Session windows (session_window.go).
		if err = checkSessionNode(n, stmt); err != nil {
			return
		}
		if err = checkCurrentWatermark(n, stmt); err != nil {
			return
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(s)
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
	return nil
}
