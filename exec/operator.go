package exec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
)

// operator is the contract between the runtime and one subtask of a
// non-source operator. All methods are called from the subtask's goroutine,
// in order: open, then process/watermark any number of times, then
// endInput once when every input has ended (bounded input), then close
// (always, also after an error). An operator with keyed state declares it
// in open (taskContext.declareState); the runtime takes its checkpoints
// and closes its store after close.
type operator interface {
	open(t *taskContext) error
	// process consumes a batch that arrived on input. The runtime releases
	// b.Rec after process returns; an operator that keeps rows copies or
	// retains them.
	process(input int, b Batch, out *emitter) error
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
	// share is the subtask's part of the state memory budget
	// (Options.Memory; stateful operators only, nil without a budget): an
	// operator reports the bytes its state holds in memory and evicts
	// past its limit.
	share *state.Share
	// m are the subtask's counters, for reportState.
	m *subtaskCounters
	// restored is this subtask's state in the checkpoint the job restores
	// from (nil when starting fresh).
	restored *restoredState
	// keyed is the state the operator declared (nil: none).
	keyed *keyedState
}

// reportState reports the bytes and keys the operator's state holds in
// memory: to its share of the state memory budget, and to the subtask's
// metrics (SubtaskMetrics.StateBytes, StateEntries).
func (t *taskContext) reportState(bytes int64, entries int) {
	t.share.Update(bytes)
	if t.m != nil {
		t.m.stateBytes.Store(bytes)
		t.m.stateEntries.Store(int64(entries))
	}
}

// snapshotContext is one checkpoint as an operator sees it.
type snapshotContext struct {
	id int64
	// dir is the checkpoint's directory; an operator writes its store's
	// checkpoint into dir/rel and reports rel.
	dir string
	rel string
	// canonical: write the store in the canonical format (a savepoint
	// that asked for it), not the backend's own.
	canonical bool
}

// committer is an operator that commits what it pre-committed for a
// checkpoint once the checkpoint completes (a transactional sink). The
// subtask calls commit(id) when checkpoint id completes.
type committer interface {
	operator
	commit(id int64) error
}

// operatorFactory builds the operator instance of one subtask from its
// operator's spec (t.op.Spec).
type operatorFactory func(t *subtask) (operator, error)

// operatorFactories is the one table of operator constructors, by
// planner.Spec.Kind. An operator kind is one Spec type in planner and one
// file here whose init calls registerOperator (or an entry below).
// Capabilities beyond operator are optional interfaces: watermarkOperator
// (driven by watermarks), committer (commits on checkpoint completion),
// planner.KeyedStateful on the spec (the subtask opens a store), several
// inputs (process's input index), late-record side outputs
// (emitter.emitLate), gauges of the state held (windowStateGauge: open
// windows and their groups; joinRowsGauge: join rows).
var operatorFactories = map[string]operatorFactory{
	planner.KindValues:         newValues,
	planner.KindCalc:           newCalc,
	planner.KindUnion:          newUnion,
	planner.KindGroupAggregate: func(t *subtask) (operator, error) { return newGroupAgg(t) },
	planner.KindSort:           func(t *subtask) (operator, error) { return newSortOp(t), nil },
	planner.KindWindowTVF:      func(t *subtask) (operator, error) { return newWindowTVF(t), nil },
	planner.KindWindowAggregate: func(t *subtask) (operator, error) {
		if t.op.Spec.(*planner.WindowAggSpec).Agg.Window.Kind == "SESSION" {
			return newSessionAgg(t) // session_window.go
		}
		return newWindowAgg(t)
	},
	planner.KindSink: newSink,
}

// registerOperator adds the constructor of an operator kind (from an init
// function of the kind's file).
func registerOperator(kind string, f operatorFactory) {
	if _, dup := operatorFactories[kind]; dup {
		panic("exec: operator kind " + kind + " registered twice")
	}
	operatorFactories[kind] = f
}

// newOperator builds the operator instance of a non-source subtask.
func newOperator(t *subtask) (operator, error) {
	f, ok := operatorFactories[t.op.Kind()]
	if !ok {
		return nil, fmt.Errorf("no operator for %s", t.op.Kind())
	}
	return f(t)
}
