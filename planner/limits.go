package planner

import "github.com/streamsql/streamsql/sql"

// MaxSelectBlocks is how many SELECT blocks planning one statement may
// bind (each block of each view it reads counted where it is read, each
// subquery counted as often as its decorrelation binds it): a statement
// that needs more is refused with an error at its position rather than
// planned for minutes. A query that nests subqueries n deep binds about
// n²/2 blocks.
const MaxSelectBlocks = 100000

// maxSelectBlocks is MaxSelectBlocks, lowered by tests.
var maxSelectBlocks = MaxSelectBlocks

// MaxSubqueryDepth is how deeply subqueries of expressions may nest
// (a IN (SELECT ... WHERE b IN (SELECT ...)) is two deep).
const MaxSubqueryDepth = 64

// MaxColumns is how many columns a join may have (its inputs' together):
// views that join themselves with SELECT * double their columns at each
// level, and a statement over twenty such levels would otherwise plan
// for minutes. Flink has no such bound; PostgreSQL's is 1664.
const MaxColumns = 10000

// selectHook, if set (by tests), is called for each SELECT block bound.
var selectHook func()

// planWork is what planning one statement has done so far.
type planWork struct {
	pos     sql.Pos // the statement's
	selects int     // SELECT blocks bound
	depth   int     // subqueries of expressions being bound, nested
	err     error   // the error of MaxSelectBlocks, once reached
}

// limited reports whether err is w's error of MaxSelectBlocks.
func (w *planWork) limited(err error) bool {
	return w != nil && w.err != nil && err == w.err
}

// planWork returns the work of the statement b plans, begun at b's
// statement if b is the first binder to count.
func (b *binder) planWork() *planWork {
	if b.work == nil {
		b.work = &planWork{pos: b.stmt.Pos()}
	}
	return b.work
}

// countSelect counts a SELECT block about to be bound: an error once the
// statement has bound MaxSelectBlocks, or once the planning context is
// done.
func (b *binder) countSelect() error {
	if err := b.p.ctxErr(); err != nil {
		return err
	}
	if selectHook != nil {
		selectHook()
	}
	w := b.planWork()
	if w.selects++; w.selects > maxSelectBlocks {
		w.err = errAt(ErrUnsupported, w.pos, "nest fewer subqueries, views or names of WITH, or join the tables instead",
			"planning the statement needs more than %d SELECT blocks to be bound", maxSelectBlocks)
		return w.err
	}
	return nil
}

// enterSubquery counts one more level of subqueries of expressions being
// bound, the one at pos: an error past MaxSubqueryDepth. leave undoes it.
func (b *binder) enterSubquery(pos sql.Pos) (leave func(), err error) {
	w := b.planWork()
	if w.depth >= MaxSubqueryDepth {
		return nil, errAt(ErrUnsupported, pos, "write some of the levels as joins",
			"subqueries nested more than %d levels deep", MaxSubqueryDepth)
	}
	w.depth++
	return func() { w.depth-- }, nil
}
