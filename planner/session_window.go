package planner

import (
	"strings"

	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// Session windows:
//
//	FROM TABLE(SESSION(TABLE t [PARTITION BY k], DESCRIPTOR(ts), gap))
//	GROUP BY window_start, window_end, k
//
// A row at time ts opens the session [ts, ts + gap); sessions of the same
// group key that overlap merge, so a session ends gap after its last row.
// The WindowSpec has Kind SESSION and the gap in Size. Sessions exist only
// inside window aggregation (a WindowAggregate, planned by the same rule
// as the other windows): each key's open sessions are kept in state, merged
// as rows arrive in any order, and a session fires (+I, once) when the
// watermark passes its end; its state is deleted then.
//
// The group keys other than the window columns are the session's key; the
// PARTITION BY columns, if given, must be among them. A SESSION table
// function without window aggregation over it is an error. DISTINCT
// aggregates merge their value multisets when sessions merge.

// bindSessionWindow binds TABLE(SESSION(...)).
func (b *binder) bindSessionWindow(w *sql.WindowTVF) (Node, error) {
	input, col, err := b.bindWindowInput(w)
	if err != nil {
		return nil, err
	}
	in := input.Schema()
	spec := WindowSpec{Kind: "SESSION", TimeCol: col, TimeName: in[col].Name}
	for _, p := range w.PartitionBy {
		found := false
		for _, c := range in {
			if strings.EqualFold(c.Name, p) {
				found = true
				spec.Partition = append(spec.Partition, c.Name)
			}
		}
		if !found {
			return nil, errAt(ErrUnknownColumn, w.Pos, "available columns: "+strings.Join(in.Names(), ", "), "PARTITION BY column '%s' not found in '%s'", p, w.Table)
		}
	}
	d, derr := w.Gap.Duration()
	if derr != nil {
		return nil, errAt(ErrUnsupported, w.Gap.Pos, "", "gap: %v", derr)
	}
	if d <= 0 {
		return nil, errAt(ErrUnsupported, w.Gap.Pos, "write a positive interval, such as INTERVAL '10' MINUTE", "the gap of SESSION must be positive")
	}
	spec.Size = d.Microseconds()
	if err := checkWindowInput(input, col, "SESSION", w.Pos, w.TimeColPos); err != nil {
		return nil, err
	}
	spec.Proctime = isProctime(windowAggregates(input), col)
	late, err := b.lateRecords(input, "SESSION", w.Pos)
	if err != nil {
		return nil, err
	}
	return &WindowTVF{Input: input, Window: spec, Late: late}, nil
}

// checkWindowInput checks what every window needs of its input: no window
// columns already, an append-only input, and a TIMESTAMP time column that
// is a time attribute unless the input is bounded.
func checkWindowInput(input Node, col int, kind string, pos, colPos sql.Pos) error {
	in := input.Schema()
	for _, c := range in {
		for _, n := range windowColumns {
			if strings.EqualFold(c.Name, n) {
				return errAt(ErrUnsupported, pos, "rename the column", "the input of %s already has a column '%s'", kind, c.Name)
			}
		}
	}
	if in[col].Type.Kind != types.Timestamp {
		return errAt(ErrTypeMismatch, colPos, "declare it TIMESTAMP(3) with a WATERMARK FOR clause",
			"the time column '%s' of %s must be a TIMESTAMP, it is %s", in[col].Name, kind, in[col].Type)
	}
	probe := windowJoins(windowAggregates(input))
	if ModeOf(probe) == Updating {
		return errAt(ErrUnsupported, pos, "window an append-only table or view, or aggregate with GROUP BY without a window", "%s over an updating input (from %s) is not supported: windows need an append-only input", kind, producer(probe))
	}
	_, err := timeAttribute(probe, col, kind, colPos)
	return err
}

// checkSessionNode reports what the plan cannot run about session windows:
// a SESSION table function left outside window aggregation, PARTITION BY
// columns that are not group keys.
func checkSessionNode(n Node, stmt sql.Statement) error {
	switch x := n.(type) {
	case *WindowTVF:
		if x.Window.Kind == "SESSION" {
			return errAt(ErrUnsupported, stmt.Pos(), "aggregate over it: GROUP BY window_start, window_end[, keys]",
				"SESSION windows are only supported in window aggregation")
		}
	case *WindowAggregate:
		if x.Window.Kind != "SESSION" {
			return nil
		}
		in := x.Input.Schema()
		for _, p := range x.Window.Partition {
			found := false
			for _, k := range x.PartitionKeys() {
				if strings.EqualFold(in[k].Name, p) {
					found = true
				}
			}
			if !found {
				return errAt(ErrUnsupported, stmt.Pos(), "add it to GROUP BY", "the SESSION window's PARTITION BY column '%s' must be a GROUP BY key", p)
			}
		}
	}
	return nil
}
