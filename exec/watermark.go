package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/functions"
)

// Watermarks.
//
// A source subtask of a table with WATERMARK FOR ts AS <expr> evaluates the
// expression over every batch it reads (one kernel call per batch), keeps
// the maximum value seen, and after the batch emits a watermark element on
// all its outputs when that maximum advanced: Flink's bounded
// out-of-orderness generator, applied per source subtask. Rows whose
// expression is NULL do not move it. The watermark is monotonic.
//
// Downstream, the runtime combines watermarks by the minimum over an
// operator's input channels (see aligner) and hands each advance to
// operators that implement watermarkOperator before forwarding it.
//
// Not yet: watermarks per split (Kafka partition, file) combined inside a
// subtask, and 'scan.watermark.idle-timeout' for idle splits. A source
// subtask that emits nothing holds the watermark of its downstream
// operators back until it ends (end of input counts as +infinity).
//
// Checkpoints: the source's generator starts again from nothing after a
// restore (the first batch sets it); the window operators keep their own
// current watermark in their state, so a restore neither fires a window
// again nor lets rows into windows that already fired.

// watermarkOperator is implemented by operators that act on event time.
// watermark is called with each advance of the operator's combined input
// watermark (microseconds since the epoch), before it is forwarded.
type watermarkOperator interface {
	watermark(wm int64, out *emitter) error
}

// maxWatermark is the watermark of an ended input.
const maxWatermark = 1<<63 - 1

// watermarkGen generates a source subtask's watermarks.
type watermarkGen struct {
	ev      *evaluator
	fctx    *functions.Context
	max     int64
	emitted int64
}

// newWatermarkGen returns the generator of source subtask t, nil when its
// table has no watermark.
func newWatermarkGen(t *subtask) (*watermarkGen, error) {
	sc := t.op.Scan
	if sc == nil || sc.Watermark == nil {
		return nil, nil
	}
	e, err := sc.Watermark.OverFields(sc.Fields)
	if err != nil {
		return nil, fmt.Errorf("watermark of %s: %w", sc.Table.Name, err)
	}
	return &watermarkGen{
		ev:      compileExpr(e),
		fctx:    &functions.Context{Mem: t.job.opts.Mem, Now: t.job.opts.Now.UnixMicro()},
		max:     minWatermark,
		emitted: minWatermark,
	}, nil
}

// observe folds batch b into the watermark (nil-safe: no watermark).
func (g *watermarkGen) observe(b Batch) error {
	if g == nil || b.Len() == 0 {
		return nil
	}
	a, err := g.ev.evalArray(g.fctx, b.Rec)
	if err != nil {
		return fmt.Errorf("watermark expression: %w", err)
	}
	defer a.Release()
	ts, ok := a.(*array.Timestamp)
	if !ok {
		return fmt.Errorf("watermark expression gave %s, not a TIMESTAMP", a.DataType())
	}
	vals := ts.TimestampValues()
	m := g.max
	if ts.NullN() == 0 {
		for _, v := range vals {
			if int64(v) > m {
				m = int64(v)
			}
		}
	} else {
		for i, v := range vals {
			if ts.IsValid(i) && int64(v) > m {
				m = int64(v)
			}
		}
	}
	g.max = m
	return nil
}

// forward emits the watermark if it advanced since the last one emitted
// (nil-safe).
func (g *watermarkGen) forward(em *emitter) error {
	if g == nil || g.max <= g.emitted {
		return nil
	}
	g.emitted = g.max
	return em.broadcast(Element{Kind: KindWatermark, Watermark: g.max})
}
