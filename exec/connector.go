package exec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

// DefaultBatchSize is the number of rows a source puts in a batch unless
// the job sets 'table.exec.batch-size'.
const DefaultBatchSize = 1024

// ErrNoData is returned by Source.Next when no row is ready right now; the
// runtime then services barriers and control messages and calls Next again.
var ErrNoData = errors.New("exec: no data ready")

// TableSpec is what a connector factory is given: the table as declared,
// which of its columns the plan reads, and where this subtask stands.
type TableSpec struct {
	// Table is the catalog name of the table.
	Table string
	// Schema is the table's full row type as declared.
	Schema types.Schema
	// Fields are the indexes into Schema a source must produce, in order
	// (projection pushdown). A sink receives rows of the full Schema and
	// Fields is nil.
	Fields []int
	// Options are the WITH options, keys as written (lower case by convention).
	Options map[string]string
	// PrimaryKey names the declared PRIMARY KEY columns (NOT ENFORCED).
	PrimaryKey []string
	// PartitionKeys names the columns of PARTITIONED BY (a connector that
	// is catalog.Connector.Partitioned).
	PartitionKeys []string
	// Watermark names the column of the table's WATERMARK ("" if none):
	// with a primary key, the table is a versioned table.
	Watermark string
	// Subtask is this instance's index in [0, Parallelism).
	Subtask, Parallelism int
	// DataDir is the engine's data directory (the table may keep files there).
	DataDir string
	// BatchSize is the preferred number of rows per batch.
	BatchSize int
	// Mem allocates the Arrow buffers of the batches a source produces.
	Mem memory.Allocator
	// Job is the job's name (stable across restarts: a default for
	// transactional ids and consumer groups).
	Job string
	// OperatorID is the stable id of the scan or sink operator.
	OperatorID string
	// CheckpointInterval is the job's checkpoint interval (zero when the job
	// does not checkpoint). A transactional sink checks its transaction
	// timeout against it when it is built.
	CheckpointInterval time.Duration
	// ExactlyOnce is false when checkpoints are AT_LEAST_ONCE.
	ExactlyOnce bool
}

// ProducedSchema is the row type of the batches a source built from s emits.
func (s TableSpec) ProducedSchema() types.Schema {
	if s.Fields == nil {
		return s.Schema
	}
	out := make(types.Schema, len(s.Fields))
	for i, f := range s.Fields {
		out[i] = s.Schema[f]
	}
	return out
}

// Source produces the rows of one subtask of a table scan.
//
// The runtime calls Open once, then Next repeatedly from one goroutine, and
// Close once at the end whatever happened (also after a failed Open). Between
// two calls of Next the runtime may take a checkpoint: Snapshot must then
// describe exactly the position after the last batch returned.
type Source interface {
	Open(ctx context.Context) error
	// Next returns the next batch (append-only unless the connector reads a
	// changelog), ErrNoData when nothing is ready within about 100ms, or
	// io.EOF once a bounded input is exhausted. A data error names the place
	// (file:line, topic/partition/offset).
	Next(ctx context.Context) (Batch, error)
	// Snapshot returns the position to restore from; Restore is called before
	// Open with a value Snapshot returned earlier.
	Snapshot() ([]byte, error)
	Restore(state []byte) error
	Close() error
}

// Sink consumes the rows of one subtask of an INSERT INTO.
//
// The runtime calls Open once, Write for each batch in order, PreCommit at
// each checkpoint barrier, Commit when that checkpoint is complete, Finish
// when the input ended (bounded jobs), and Close once at the end.
type Sink interface {
	Open(ctx context.Context) error
	// Write consumes b. The runtime releases b.Rec after Write returns; a
	// sink that keeps rows copies them.
	Write(ctx context.Context, b Batch) error
	// PreCommit makes everything written so far durable but not yet visible
	// (flush the open transaction) and returns what Commit needs.
	PreCommit(ctx context.Context, checkpointID int64) ([]byte, error)
	// Commit makes the rows of checkpoint checkpointID visible. It must be
	// idempotent: a restore may commit the same checkpoint again.
	Commit(ctx context.Context, checkpointID int64, handle []byte) error
	// Finish flushes and commits everything after the end of a bounded input.
	Finish(ctx context.Context) error
	Close() error
}

// OrderedCommitter is implemented by sinks whose pre-commit of a
// checkpoint must wait until the outcome of every earlier checkpoint they
// pre-committed is known: completed (and committed) or aborted. A
// database transaction prepared at one barrier holds its rows' locks
// until its commit, which the writes of the next checkpoint's transaction
// would otherwise wait for (the jdbc sink's exactly-once mode). The
// runtime serves the completions and aborts delivered to the sink subtask
// meanwhile; the checkpoint coordinator decides each one without the
// sink (its acknowledgement was given at the earlier barrier). When
// CommitBeforeNextPreCommit is false, the sink pre-commits as soon as the
// barrier is aligned, as any other.
type OrderedCommitter interface {
	CommitBeforeNextPreCommit() bool
}

// WatermarkSink is implemented by sinks that act on the watermark of their
// input (the filesystem sink commits the partitions it passed). Watermark
// is called from the sink's goroutine, between two calls of Write, with
// the subtask's watermark each time it advances (microseconds).
type WatermarkSink interface {
	Watermark(wm int64)
}

// CheckpointListener is implemented by sources that act when a checkpoint
// completes (a Kafka source commits its offsets to the consumer group). It
// is called from the source's goroutine, between two calls of Next.
type CheckpointListener interface {
	NotifyCheckpointComplete(ctx context.Context, checkpointID int64) error
}

// Rescalable is implemented by sources that can resume from a checkpoint
// taken at another parallelism. RestoreRescaled is called instead of
// Restore, before Open, with the snapshots of every old subtask in subtask
// order; each new subtask takes its share (splits dealt round-robin, Kafka
// partitions it now owns), so that together they resume every position
// exactly once.
type Rescalable interface {
	RestoreRescaled(states [][]byte) error
}

// SplitSource is implemented by sources that read several splits in one
// subtask (a Kafka source: its partitions), so that watermarks are
// generated per split and an idle split stops holding them back. Both
// methods are called from the source's goroutine, right after Next; the
// runtime neither keeps nor modifies the slices they return, which the
// source may reuse on its next call of Next. A source that does not
// implement SplitSource is one split.
type SplitSource interface {
	// Splits lists the splits the subtask reads now, in a stable order. A
	// split read to its end (bounded reads) is no longer listed.
	Splits() []string
	// BatchSplits says which split each row of the batch Next returned
	// last came from, as runs of consecutive rows in row order; the last
	// run ends at the batch's length.
	BatchSplits() []SplitRun
}

// SplitRun is a run of consecutive rows of a batch that came from one
// split: the rows from the previous run's End (0 for the first) up to End,
// exclusive.
type SplitRun struct {
	Split string
	End   int
}

// SkipCounter is implemented by sources that skip bad records when told to
// ('json.ignore-parse-errors'). SkippedRecords may be called from any
// goroutine while the source runs.
type SkipCounter interface {
	SkippedRecords() int64
}

// TombstoneCounter is implemented by sources that skip messages without a
// value (Kafka tombstones) an append-only table has no row for.
// TombstonesSkipped may be called from any goroutine while the source runs.
type TombstoneCounter interface {
	TombstonesSkipped() int64
}

// Waiter is implemented by sources that can run while what they read does
// not exist yet (a Kafka source whose topic is not created: it looks for it
// again, as partition discovery does). Waiting says what the subtask waits
// for, as a sentence for SHOW JOBS and the log ("kafka clicks waits for
// topic 'clicks' to be created"), or "" when it waits for nothing; it may
// be called from any goroutine while the source runs.
type Waiter interface {
	Waiting() string
}

// LagReporter is implemented by sources that know how far behind the end
// of their input they are, per partition (a Kafka source: each partition's
// high watermark, or its last stable offset when it reads committed
// messages only, as of its last fetch, less the offset of the next message
// it will read). The source updates what Lag reports once per batch (or
// fetch), never per row; Lag may be called from any goroutine while the
// source runs, and returns a new slice. A partition the source has no
// fetch of yet is left out.
type LagReporter interface {
	Lag() []PartitionLag
}

// PartitionLag is how many records a source subtask is behind in one
// partition of a topic.
type PartitionLag struct {
	Topic     string
	Partition int32
	Records   int64
}

// SourceFactory builds a source subtask for a table.
type SourceFactory func(spec TableSpec) (Source, error)

// SinkFactory builds a sink subtask for a table.
type SinkFactory func(spec TableSpec) (Sink, error)

// Factories are a connector's source and sink constructors (nil: it
// cannot be read, or written).
type Factories struct {
	Source SourceFactory
	Sink   SinkFactory
}

// RegisterConnector registers a connector in the one connector registry
// (catalog's): its capabilities c, and src and snk, either of which may be
// nil; c.Source and c.Sink must agree with them. It is called from init
// functions and panics on a mistake or a duplicate name.
func RegisterConnector(c catalog.Connector, src SourceFactory, snk SinkFactory) {
	if c.Source != (src != nil) || c.Sink != (snk != nil) {
		panic(fmt.Sprintf("exec: connector %s: capabilities and factories disagree", c.Name))
	}
	c.Factories = &Factories{Source: src, Sink: snk}
	catalog.RegisterConnector(c)
}

// factories returns connector name's factories, or an error wrapping
// catalog.ErrUnknownConnector that lists the connectors that can be used
// as what (a source or a sink).
func factories(name, what string, can func(*Factories) bool) (*Factories, error) {
	if c, ok := catalog.LookupConnector(name); ok {
		if f, ok := c.Factories.(*Factories); ok && can(f) {
			return f, nil
		}
	}
	var have []string
	for _, n := range catalog.ConnectorNames() {
		c, _ := catalog.LookupConnector(n)
		if f, ok := c.Factories.(*Factories); ok && can(f) {
			have = append(have, n)
		}
	}
	return nil, fmt.Errorf("%w %q as a %s (have %v)", catalog.ErrUnknownConnector, name, what, have)
}

func lookupSource(name string) (SourceFactory, error) {
	f, err := factories(name, "source", func(f *Factories) bool { return f.Source != nil })
	if err != nil {
		return nil, err
	}
	return f.Source, nil
}

func lookupSink(name string) (SinkFactory, error) {
	f, err := factories(name, "sink", func(f *Factories) bool { return f.Sink != nil })
	if err != nil {
		return nil, err
	}
	return f.Sink, nil
}

// NewSource builds a source of connector name (for connectors' tests; a
// job builds its sources from its plan).
func NewSource(name string, spec TableSpec) (Source, error) {
	f, err := lookupSource(name)
	if err != nil {
		return nil, err
	}
	return f(spec)
}

// NewSink builds a sink of connector name (for connectors' tests).
func NewSink(name string, spec TableSpec) (Sink, error) {
	f, err := lookupSink(name)
	if err != nil {
		return nil, err
	}
	return f(spec)
}
