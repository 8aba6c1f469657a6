package planner

import (
	"fmt"

	"github.com/streamsql/streamsql/sql"
)

// Processing-time windows.
//
// A window whose time column is a table's PROCTIME() column (computed.go),
// carried through filters, projections, unions and windows as a row-time
// column is, is a processing-time window (WindowSpec.Proctime). It runs on
// the same operators as an event-time window: the source subtask of a
// table with a PROCTIME() column emits its wall clock as the watermark
// (exec/proctime.go), so a window fires once the clock passed its end,
// with or without later rows. Rows are stamped no earlier than the last
// watermark of their source, so none is ever late.
//
// At the end of a bounded input the windows the clock has not passed yet
// are not fired (WindowAggregate.FiresAtEnd), as in Flink, which quiesces
// its processing-time timers when the input ends.
//
// PROCTIME() in a select list (SELECT *, PROCTIME() AS p_time FROM bid, in
// a view or subquery) is the column of an AddProctime node
// (proctime_attr.go), which stamps rows where it runs and sends its clock
// as the watermark in place of its input's: a processing-time window over
// it works also when the table below declares a WATERMARK, and an
// event-time window past it is an error (clockWatermarks).
//
// A table with both a PROCTIME() column and a WATERMARK emits event-time
// watermarks, so a processing-time window over that column is an error; so are the
// event-time auxiliary functions (TUMBLE_ROWTIME ...) over a processing-time
// group window, and TUMBLE_PROCTIME over an event-time one.

// isProctime reports whether column col of n is a processing-time
// attribute: a scan's PROCTIME() column, carried through filters,
// projections (as a plain column), unions and windows, or the window_time
// of a processing-time window.
func isProctime(n Node, col int) bool {
	switch x := n.(type) {
	case *Scan:
		return x.Proctime >= 0 && col < len(x.Fields) && x.Fields[col] == x.Proctime
	case *Filter:
		return isProctime(x.Input, col)
	case *Project:
		if c, ok := x.Exprs[col].(*ColumnRef); ok {
			return isProctime(x.Input, c.Index)
		}
	case *Union:
		for _, in := range x.Inputs {
			if !isProctime(in, col) {
				return false
			}
		}
		return true
	case *WindowTVF:
		nIn := len(x.Input.Schema())
		if col < nIn {
			return isProctime(x.Input, col)
		}
		return col == nIn+2 && x.Window.Proctime
	case *WindowAggregate:
		return col < len(x.Keys) && x.Keys[col] == WindowTimeKey && x.Window.Proctime
	case *AddProctime:
		nIn := len(x.Input.Schema())
		return col == nIn || (col < nIn && isProctime(x.Input, col))
	}
	return false
}

// hasWatermark reports whether a scan under n declares a WATERMARK whose
// watermarks reach n (AddProctime puts the clock in their place).
func hasWatermark(n Node) bool {
	switch x := n.(type) {
	case *Scan:
		return x.Watermark != nil
	case *AddProctime:
		return false
	}
	for _, c := range n.Children() {
		if hasWatermark(c) {
			return true
		}
	}
	return false
}

// timeAttribute checks the time column col of a window of kind over input
// (as window aggregation will make it: probe) and says whether the window
// is a processing-time one. The column must be a time attribute, row-time
// or processing-time, unless the input is bounded.
func timeAttribute(probe Node, col int, kind string, colPos sql.Pos) (bool, error) {
	name := probe.Schema()[col].Name
	if isProctime(probe, col) {
		if hasWatermark(probe) {
			return false, errAt(ErrUnsupported, colPos, "window by the table's row-time column, or read the table without its WATERMARK",
				"the processing-time column '%s' of %s is read from a table that declares a WATERMARK, whose watermarks are event time", name, kind)
		}
		return true, nil
	}
	if !isRowtime(probe, col) && clockWatermarks(probe) {
		return false, errAt(ErrUnsupported, colPos, "window by the processing-time column, or add PROCTIME() after the window",
			"the time column '%s' of %s is not a row-time attribute, and the input's watermarks are the processing-time clock of PROCTIME()", name, kind)
	}
	if !IsBounded(probe) && !isRowtime(probe, col) {
		return false, errAt(ErrUnsupported, colPos, fmt.Sprintf("declare WATERMARK FOR %s AS %s - INTERVAL '5' SECOND in the table, or window by a column pt AS PROCTIME()", name, name),
			"the time column '%s' of %s over an unbounded input must be a time attribute (a column with a watermark, or PROCTIME())", name, kind)
	}
	return false, nil
}

// FiresAtEnd reports whether the windows left open at the end of a bounded
// input fire then: not under EMIT ON WINDOW CLOSE, and not for processing
// time, whose windows fire only when the clock passes their end.
func (w *WindowAggregate) FiresAtEnd() bool {
	return !w.EmitOnWindowClose && !w.Window.Proctime
}

// clockWatermarks reports whether the watermarks reaching n are a
// processing-time clock: n reads through AddProctime, whose output's
// watermarks are its clock. An event-time window there would take rows
// for late.
func clockWatermarks(n Node) bool {
	if _, ok := n.(*AddProctime); ok {
		return true
	}
	for _, c := range n.Children() {
		if clockWatermarks(c) {
			return true
		}
	}
	return false
}

// IsProctimeColumn reports whether column col of n is a processing-time
// attribute (DESCRIBE of a view marks it *PROCTIME*).
func IsProctimeColumn(n Node, col int) bool { return isProctime(n, col) }
