package exec

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/planner"
)

func init() {
	registerOperator(planner.KindAddProctime, func(t *subtask) (operator, error) { return newAddProctime(t), nil })
}

// addProctimeOp is planner.AddProctimeSpec: PROCTIME() in a select list.
// Each batch gets its last column filled with the subtask's clock read
// once for the batch (milliseconds, never going back: proctimeGen), and
// the clock is the output's watermark, as a source subtask of a table's
// PROCTIME() column emits it (proctime.go): after each batch, and every
// proctimeTick while no element arrives, so a processing-time window
// downstream fires when the clock passes its end whether or not rows
// come. The input's watermarks are not forwarded (ownsWatermarks). At the
// end of the input nothing more is emitted: the windows the clock has not
// passed stay unfired, as in Flink. It keeps no state: after a restore the
// clock simply goes on.
type addProctimeOp struct {
	t      *taskContext
	schema *arrow.Schema
	clock  proctimeGen
	next   time.Time
	ts     *array.TimestampBuilder
	cols   []arrow.Array
}

// proctimeTick is how often an idle AddProctime subtask sends its clock.
const proctimeTick = 100 * time.Millisecond

func newAddProctime(t *subtask) *addProctimeOp {
	return &addProctimeOp{
		schema: t.op.Schema.Arrow(),
		clock:  proctimeGen{last: minWatermark, emitted: minWatermark, watermarks: true},
	}
}

func (a *addProctimeOp) open(t *taskContext) error {
	a.t = t
	a.ts = array.NewTimestampBuilder(t.mem, &arrow.TimestampType{Unit: arrow.Microsecond})
	a.next = time.Now().Add(proctimeTick)
	return nil
}

// ownsWatermarks: the subtask does not forward the input's watermarks.
func (*addProctimeOp) ownsWatermarks() {}

func (a *addProctimeOp) process(_ int, b Batch, out *emitter) error {
	now := time.Now()
	stamp := a.clock.stamp(now)
	n := b.Len()
	a.ts.Reserve(n)
	for range n {
		a.ts.UnsafeAppend(arrow.Timestamp(stamp))
	}
	col := a.ts.NewArray()
	defer col.Release()
	// The input's columns (a source of no fields may send more).
	nIn := a.schema.NumFields() - 1
	if int(b.Rec.NumCols()) < nIn {
		return fmt.Errorf("AddProctime: a batch of %d columns, %d expected", b.Rec.NumCols(), nIn)
	}
	a.cols = append(a.cols[:0], b.Rec.Columns()[:nIn]...)
	a.cols = append(a.cols, col)
	rec := array.NewRecordBatch(a.schema, a.cols, int64(n))
	clear(a.cols)
	if err := out.emit(Batch{Rec: rec, Ops: b.Ops}); err != nil {
		return err
	}
	return a.tick(out, now)
}

// tick sends the clock as the watermark and sets the next tick.
func (a *addProctimeOp) tick(out *emitter, now time.Time) error {
	a.next = now.Add(proctimeTick)
	return a.clock.forward(out, now)
}

func (a *addProctimeOp) deadline() (time.Time, bool) { return a.next, true }
func (a *addProctimeOp) onTimer(out *emitter) error  { return a.tick(out, time.Now()) }

func (a *addProctimeOp) endInput(*emitter) error { return nil }
func (a *addProctimeOp) close() error {
	if a.ts != nil {
		a.ts.Release()
	}
	return nil
}
