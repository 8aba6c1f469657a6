package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// RowKind is the changelog operation of one row, as Flink's RowKind.
type RowKind uint8

const (
	// Insert (+I) adds a row.
	Insert RowKind = iota
	// UpdateBefore (-U) retracts the previous version of an updated row.
	UpdateBefore
	// UpdateAfter (+U) adds the new version of an updated row.
	UpdateAfter
	// Delete (-D) retracts a row.
	Delete
)

// String returns Flink's short form: +I, -U, +U, -D.
func (k RowKind) String() string {
	switch k {
	case Insert:
		return "+I"
	case UpdateBefore:
		return "-U"
	case UpdateAfter:
		return "+U"
	case Delete:
		return "-D"
	}
	return fmt.Sprintf("RowKind(%d)", k)
}

// IsRetract reports whether rows of this kind take a row away (-U, -D).
func (k RowKind) IsRetract() bool { return k == UpdateBefore || k == Delete }

// Batch is a set of rows travelling together: an Arrow record and, for
// updating streams, the changelog op of each row. Ops is nil for an
// append-only batch (every row is +I); otherwise len(Ops) == Rec.NumRows().
//
// Ownership: a Batch handed to an Emitter belongs to the receiver, who
// releases Rec when done with it. A receiver must not modify Rec or Ops.
type Batch struct {
	Rec arrow.RecordBatch
	Ops []RowKind
}

// Len is the number of rows.
func (b Batch) Len() int { return int(b.Rec.NumRows()) }

// Op returns the op of row i.
func (b Batch) Op(i int) RowKind {
	if b.Ops == nil {
		return Insert
	}
	return b.Ops[i]
}

// ElementKind says what an Element carries.
type ElementKind uint8

const (
	// KindBatch is a batch of rows.
	KindBatch ElementKind = iota
	// KindWatermark says no row with event time <= Watermark follows on this input.
	KindWatermark
	// KindBarrier is checkpoint barrier Barrier.
	KindBarrier
	// KindEnd says the input has ended (bounded sources); nothing follows.
	KindEnd
	// KindIdle says the sender is idle: until it sends a batch or a
	// watermark again, it holds no watermark back (Flink's
	// WatermarkStatus.IDLE).
	KindIdle
	// KindLatencyMarker is latency marker Marker (latency.go).
	KindLatencyMarker
)

// Barrier marks the cut of a checkpoint in a stream.
type Barrier struct {
	// ID is the checkpoint id, increasing per job.
	ID int64
	// Savepoint is set for a savepoint (self-contained snapshot).
	Savepoint bool
}

// Element is what travels on an edge between two subtasks.
type Element struct {
	Kind      ElementKind
	Batch     Batch
	Watermark int64 // microseconds since the epoch (KindWatermark)
	Barrier   Barrier
	Marker    LatencyMarker // KindLatencyMarker
	// Input is the index of the receiving operator's input (edge) the
	// element arrives on, and From the index of the sending channel among
	// all of the receiver's channels. The runtime sets both.
	Input, From int
}
