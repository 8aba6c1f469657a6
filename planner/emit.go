package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/sql"
)

// EMIT ON WINDOW CLOSE (RisingWave's emit mode, sql.EmitOnWindowClose).
//
// A query ending with EMIT ON WINDOW CLOSE must be a window aggregation
// (possibly under filters and projections) whose time column carries a
// watermark: it emits each window once, when the watermark passes the
// window's end, and at the end of a bounded input it leaves the windows the
// watermark has not passed unemitted (WindowAggregate.EmitOnWindowClose)
// instead of firing them all. Besides the GROUP BY window_start,
// window_end of Flink, the clause lets GROUP BY window_start alone make a
// window aggregation of TUMBLE and HOP (window_end alone of any window), as
// in RisingWave, since either bound names the window. Anything else is
// ErrUnsupported at the clause.

// markEmit records stmt's EMIT ON WINDOW CLOSE, if any, on the aggregation
// at the top of the bound query n.
func markEmit(stmt sql.Statement, n Node) error {
	pos, ok := sql.EmitOnWindowClose(stmt)
	if !ok {
		return nil
	}
	for {
		switch x := n.(type) {
		case *Project:
			n = x.Input
		case *Filter:
			n = x.Input
		case *Aggregate:
			x.emitAt = &pos
			return nil
		case *WindowAggregate:
			x.EmitOnWindowClose, x.emitAt = true, &pos
			return nil
		default:
			return errAt(ErrUnsupported, pos, emitHint, "EMIT ON WINDOW CLOSE needs a query that ends in a window aggregation (GROUP BY a window's bounds)")
		}
	}
}

const emitHint = "group the rows of a window, e.g. SELECT window_start, COUNT(*) FROM TUMBLE(t, ts, INTERVAL '1' MINUTE) GROUP BY window_start EMIT ON WINDOW CLOSE"

// windowKeyed reports whether GROUP BY keys naming the window columns seen
// (start, end, time) group by window: Flink's rule is start and end; with
// EMIT ON WINDOW CLOSE one bound that names the window is enough.
func windowKeyed(kind string, seen [3]bool, emit bool) bool {
	if seen[0] && seen[1] {
		return true
	}
	if !emit {
		return false
	}
	return seen[1] || (seen[0] && (kind == "TUMBLE" || kind == "HOP"))
}

// checkEmit reports an EMIT ON WINDOW CLOSE that the optimized plan n
// cannot honour: an aggregation that did not become a window aggregation,
// or a window aggregation whose time column has no watermark.
func checkEmit(n Node) error {
	return Inspect(n, func(n Node) error {
		switch x := n.(type) {
		case *Aggregate:
			if x.emitAt != nil {
				return errAt(ErrUnsupported, *x.emitAt, emitHint,
					"EMIT ON WINDOW CLOSE needs a GROUP BY of a window's bounds (window_start or window_end of TUMBLE or HOP, window_end of CUMULATE)")
			}
		case *WindowAggregate:
			if x.emitAt != nil && !x.Window.Attached && !isRowtime(x.Input, x.Window.TimeCol) {
				name := x.Input.Schema()[x.Window.TimeCol].Name
				return errAt(ErrUnsupported, *x.emitAt, fmt.Sprintf("declare WATERMARK FOR %s AS %s - INTERVAL '5' SECOND in the table", name, name),
					"EMIT ON WINDOW CLOSE needs a watermark on the time column '%s': windows close when the watermark passes their end", name)
			}
		}
		return nil
	})
}
