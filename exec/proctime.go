package exec

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
)

// Computed columns and processing time in a source subtask.
//
// A scan that reads computed columns (planner/computed.go) builds its
// connector over the table's physical columns (Scan.PhysicalFields), and
// the subtask turns each batch the connector returns into the scan's batch:
// physical fields are passed through, computed ones evaluated over the
// physical batch (one kernel call per column per batch), and the PROCTIME()
// field filled with the batch's stamp: the subtask's wall clock read once
// when Next returned the batch, at millisecond precision (TIMESTAMP(3)),
// never going back within the subtask.
//
// Processing-time watermarks: a subtask whose scan reads the PROCTIME()
// column of a table without a WATERMARK emits its clock as the watermark
// after each batch and after each poll that found no data (ErrNoData,
// about every 100 ms at most), so a processing-time window fires once the
// clock passed its end, whether or not a later row arrives. The watermark is
// the clock's millisecond minus one microsecond: every row stamped later is
// after it, so no row is ever late, and a window [s, e) fires at the first
// watermark read at or after e (windowFired). Such a subtask never goes
// idle. At the end of a bounded input it emits the clock, not the largest
// watermark: the windows still open then are not fired (Flink quiesces its
// processing-time timers when the input ends). After a restore the clock
// simply goes on: the window operator's state (windows and its watermark)
// is restored, and the windows whose end passed while the job was down fire
// at the restored job's first watermark, as Flink fires the processing-time
// timers that are due on restore. A wall clock set back across a restore
// would make rows late; within a run the stamp never goes back.

// scanBuilder turns a connector's batch of physical columns into the batch
// of a scan that reads computed columns.
type scanBuilder struct {
	schema *arrow.Schema
	// phys[i] is the position of scan field i in the connector's batch; -1
	// for a computed field (evs[i]) or the PROCTIME() field (proctime).
	phys     []int
	evs      []*evaluator
	proctime int
	fctx     *functions.Context
	cols     []arrow.Array
	ts       *array.TimestampBuilder
}

// newScanBuilder returns the builder of scan sc (nil when it reads no
// computed column).
func newScanBuilder(t *subtask, sc *planner.Scan) *scanBuilder {
	if !sc.HasComputed() {
		return nil
	}
	_, idx := sc.Table.Physical()
	pos := map[int]int{}
	for j, p := range sc.PhysicalFields() {
		pos[idx[p]] = j
	}
	b := &scanBuilder{
		schema:   t.op.Schema.Arrow(),
		phys:     make([]int, len(sc.Fields)),
		evs:      make([]*evaluator, len(sc.Fields)),
		proctime: sc.ProctimeField(),
		fctx:     &functions.Context{Mem: t.job.opts.Mem, Now: t.job.opts.Now.UnixMicro()},
		cols:     make([]arrow.Array, len(sc.Fields)),
	}
	for i, f := range sc.Fields {
		b.phys[i] = -1
		if e := sc.ComputedOverPhysical(i); e != nil {
			b.evs[i] = compileExpr(e)
		} else if i != b.proctime {
			b.phys[i] = pos[f]
		}
	}
	if b.proctime >= 0 {
		b.ts = array.NewTimestampBuilder(t.job.opts.Mem, &arrow.TimestampType{Unit: arrow.Microsecond})
	}
	return b
}

// build returns the scan's batch for in, the connector's batch, stamped
// stamp (microseconds), and releases in.
func (b *scanBuilder) build(in Batch, stamp int64) (Batch, error) {
	defer in.Rec.Release()
	n := in.Len()
	defer func() {
		for i, c := range b.cols {
			if c != nil {
				c.Release()
				b.cols[i] = nil
			}
		}
	}()
	for i := range b.cols {
		switch {
		case b.phys[i] >= 0:
			c := in.Rec.Column(b.phys[i])
			c.Retain()
			b.cols[i] = c
		case b.evs[i] != nil:
			a, err := b.evs[i].evalArray(b.fctx, in.Rec)
			if err != nil {
				return Batch{}, fmt.Errorf("computed column %s: %w", b.schema.Field(i).Name, err)
			}
			b.cols[i] = a
		default:
			b.ts.Reserve(n)
			for range n {
				b.ts.UnsafeAppend(arrow.Timestamp(stamp))
			}
			b.cols[i] = b.ts.NewArray()
		}
	}
	return Batch{Rec: array.NewRecordBatch(b.schema, b.cols, int64(n)), Ops: in.Ops}, nil
}

// proctimeGen is the processing-time clock of a source subtask: the stamp
// of its batches and its watermarks. It is used from the source's
// goroutine only.
type proctimeGen struct {
	// last is the last stamp, microseconds at millisecond precision.
	last int64
	// emitted is the last watermark sent; watermarks says the subtask
	// sends them (its scan reads the PROCTIME() column of a table without
	// a WATERMARK).
	emitted    int64
	watermarks bool
}

// newProctimeGen returns the clock of source subtask t, nil when its scan
// reads no PROCTIME() column.
func newProctimeGen(sc *planner.Scan) *proctimeGen {
	if sc == nil || sc.ProctimeField() < 0 {
		return nil
	}
	return &proctimeGen{last: minWatermark, emitted: minWatermark, watermarks: sc.Watermark == nil}
}

// stamp returns the processing time of a batch read at now (nil-safe).
func (g *proctimeGen) stamp(now time.Time) int64 {
	if g == nil {
		return 0
	}
	g.last = max(g.last, now.UnixMilli()*1000)
	return g.last
}

// forward sends the watermark of the clock at now, if it advanced
// (nil-safe).
func (g *proctimeGen) forward(em *emitter, now time.Time) error {
	if g == nil || !g.watermarks {
		return nil
	}
	wm := g.stamp(now) - 1
	if wm <= g.emitted {
		return nil
	}
	g.emitted = wm
	return em.broadcast(Element{Kind: KindWatermark, Watermark: wm})
}
