package exec

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/checkpoint"
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
	// snapshot takes the operator's part of checkpoint cp (state flushed and
	// checkpointed under cp.dir, or small state returned inline).
	snapshot(cp *snapshotContext) (checkpoint.SubtaskState, error)
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
	// restored is this subtask's state in the checkpoint the job restores
	// from (nil when starting fresh).
	restored *restoredState
}

// snapshotContext is one checkpoint as an operator sees it.
type snapshotContext struct {
	id int64
	// dir is the checkpoint's directory; an operator writes its store's
	// checkpoint into dir/rel and reports rel.
	dir string
	rel string
}
