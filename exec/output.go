package exec

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// target is one receiving subtask of an output, and the sender's channel
// index there.
type target struct {
	task *subtask
	from int
}

// output sends a subtask's elements along one downstream edge.
type output struct {
	edge      planner.Edge
	input     int
	partition planner.Partitioning
	keys      []int
	maxPar    int
	sender    int
	targets   []target
	// bp is the sending subtask's backpressure counter.
	bp *atomic.Int64
	rr int

	// scratch for hash partitioning, reused across batches
	hashes []uint64
	rows   [][]int32
}

// emitter is how an operator emits; it fans out to every output.
type emitter struct {
	task *subtask
}

// emit sends b downstream. It takes ownership of b.Rec (released here or
// by the receivers).
func (e *emitter) emit(b Batch) error {
	return e.emitTo(e.task.outputs, b)
}

// emitLate sends late records (rows of the operator's input) along the
// side outputs. It takes ownership of b.Rec. Without side outputs it is an
// error: a late record must not vanish.
func (e *emitter) emitLate(b Batch) error {
	if len(e.task.lateOutputs) == 0 {
		if b.Rec != nil {
			b.Rec.Release()
		}
		return errNoLateOutput
	}
	return e.emitTo(e.task.lateOutputs, b)
}

var errNoLateOutput = errors.New("late records to route but no output for them")

func (e *emitter) emitTo(outs []*output, b Batch) error {
	if b.Rec == nil {
		return nil
	}
	if b.Len() == 0 || len(outs) == 0 {
		b.Rec.Release()
		return nil
	}
	e.task.m.recordsOut.Add(int64(b.Len()))
	for i, o := range outs {
		if i < len(outs)-1 {
			b.Rec.Retain()
		}
		if err := o.sendBatch(e.task.job.ctx, b); err != nil {
			return err
		}
	}
	return nil
}

// broadcast sends a control element (watermark, barrier, end) to every
// receiver of every output.
func (e *emitter) broadcast(el Element) error {
	if el.Kind == KindWatermark {
		e.task.m.outWatermark.Store(el.Watermark)
	}
	for _, outs := range [2][]*output{e.task.outputs, e.task.lateOutputs} {
		for _, o := range outs {
			for _, t := range o.targets {
				el.Input, el.From = o.input, t.from
				if err := send(e.task.job.ctx, t.task, el, &e.task.m.backpressured); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// send puts el in t's inbox; bp, the sender's backpressure counter, gets
// the time spent waiting for room when the inbox is full (only then is the
// clock read).
func send(ctx context.Context, t *subtask, el Element, bp *atomic.Int64) error {
	select {
	case t.inbox <- el:
		return nil
	default:
	}
	start := time.Now()
	defer func() { bp.Add(int64(time.Since(start))) }()
	select {
	case t.inbox <- el:
		return nil
	case <-ctx.Done():
		if el.Kind == KindBatch {
			el.Batch.Rec.Release()
		}
		return errCanceled
	}
}

func (o *output) to(ctx context.Context, t target, b Batch) error {
	return send(ctx, t.task, Element{Kind: KindBatch, Batch: b, Input: o.input, From: t.from}, o.bp)
}

func (o *output) sendBatch(ctx context.Context, b Batch) error {
	switch {
	case len(o.targets) == 1:
		return o.to(ctx, o.targets[0], b)
	case o.partition == planner.Rebalance:
		t := o.targets[o.rr%len(o.targets)]
		o.rr++
		return o.to(ctx, t, b)
	case o.partition == planner.Broadcast:
		for i, t := range o.targets {
			if i < len(o.targets)-1 {
				b.Rec.Retain()
			}
			if err := o.to(ctx, t, b); err != nil {
				return err
			}
		}
		return nil
	}
	return o.hashPartition(ctx, b)
}

// hashPartition splits b by the key group of each row's key and sends each
// part to the subtask owning it.
func (o *output) hashPartition(ctx context.Context, b Batch) error {
	defer b.Rec.Release()
	n := b.Len()
	if cap(o.hashes) < n {
		o.hashes = make([]uint64, n)
	}
	h := o.hashes[:n]
	clear(h)
	for _, k := range o.keys {
		col := b.Rec.Column(k)
		functions.HashColumn(functions.Vec{Array: col, Type: o.edge.From.Schema[k].Type}, n, h)
	}
	if o.rows == nil {
		o.rows = make([][]int32, len(o.targets))
	}
	for i := range o.rows {
		o.rows[i] = o.rows[i][:0]
	}
	p := len(o.targets)
	for i, hv := range h {
		kg := state.KeyGroup(hv, o.maxPar)
		s := state.SubtaskOf(kg, o.maxPar, p)
		o.rows[s] = append(o.rows[s], int32(i))
	}
	for s, rows := range o.rows {
		if len(rows) == 0 {
			continue
		}
		var part Batch
		if len(rows) == n {
			b.Rec.Retain()
			part = b
		} else {
			var err error
			if part, err = takeRows(ctx, b, rows); err != nil {
				return err
			}
		}
		if err := o.to(ctx, o.targets[s], part); err != nil {
			return err
		}
	}
	return nil
}

// takeRows builds a new batch from the given rows of b.
func takeRows(ctx context.Context, b Batch, rows []int32) (Batch, error) {
	ib := array.NewInt32Builder(memory.DefaultAllocator)
	ib.AppendValues(rows, nil)
	indices := ib.NewArray()
	ib.Release()
	defer indices.Release()
	cols := make([]arrow.Array, b.Rec.NumCols())
	for i := range cols {
		c, err := compute.TakeArray(ctx, b.Rec.Column(i), indices)
		if err != nil {
			for _, x := range cols[:i] {
				x.Release()
			}
			return Batch{}, err
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(b.Rec.Schema(), cols, int64(len(rows)))
	for _, c := range cols {
		c.Release()
	}
	out := Batch{Rec: rec}
	if b.Ops != nil {
		out.Ops = make([]RowKind, len(rows))
		for i, r := range rows {
			out.Ops[i] = b.Ops[r]
		}
	}
	return out, nil
}
