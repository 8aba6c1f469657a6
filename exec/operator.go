package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// operator is the contract between the runtime and one subtask of a
// non-source operator. All methods are called from the subtask's goroutine,
// in order: open, then process/watermark/snapshot any number of times, then
// endInput once when every input has ended (bounded input), then close
// (always, also after an error).
type operator interface {
	open(t *taskContext) error
	// process consumes a batch that arrived on input. The runtime releases
	// b.Rec after process returns; an operator that keeps rows copies or
	// retains them.
	process(input int, b Batch, out *emitter) error
	// snapshot flushes the operator's state at checkpoint barrier id.
	snapshot(id int64) error
	// endInput is called once all inputs ended; it emits any final rows.
	endInput(out *emitter) error
	close() error
}

// taskContext is what an operator subtask may use.
type taskContext struct {
	ctx       context.Context
	op        *planner.Operator
	subtask   int
	job       *Job
	mem       memory.Allocator
	fctx      *functions.Context
	batchSize int
	// store is the subtask's keyed state (stateful operators only).
	store state.Store
}
