package planner

import "github.com/streamsql/streamsql/sql"

// CURRENT_WATERMARK(ts) is the watermark of the operator that evaluates it
// (a filter or projection), NULL while it has none (functions/datetime.go).
// As in Flink its argument must be a time attribute of that operator's
// input: a column declared in WATERMARK FOR, passed on unchanged. It is
// non-deterministic, so no rule moves it, into a scan or elsewhere.

// checkCurrentWatermark rejects a CURRENT_WATERMARK among the expressions
// of n (a node of one input) whose argument is not a time attribute of n's
// input.
func checkCurrentWatermark(n Node, stmt sql.Statement) error {
	ch := n.Children()
	if len(ch) != 1 {
		return nil
	}
	in := ch[0]
	var err error
	for _, e := range n.Expressions() {
		walkExpr(e, func(e Expr) {
			c, ok := e.(*Call)
			if !ok || c.Func != "CURRENT_WATERMARK" || err != nil || len(c.Args) != 1 {
				return
			}
			if ref, ok := c.Args[0].(*ColumnRef); ok && isRowtime(in, ref.Index) {
				return
			}
			pos := stmt.Pos()
			if c.Pos != (sql.Pos{}) {
				pos = c.Pos
			}
			what := "an expression"
			if ref, ok := c.Args[0].(*ColumnRef); ok {
				what = "'" + ref.Name + "', which has no watermark here"
			}
			err = errAt(ErrUnsupported, pos, "pass the column of the table's WATERMARK FOR clause",
				"CURRENT_WATERMARK takes a time attribute (a column with a watermark), not %s", what)
		})
	}
	return err
}
