package checkpoint

import "time"

// Record is one checkpoint in a coordinator's history: completed or
// failed (declined and subsumed ones included, their cause said).
type Record struct {
	ID        int64
	Savepoint bool
	// Status is StatusCompleted or StatusFailed.
	Status    string
	Triggered time.Time
	// Duration is from the trigger to the metadata written (completed:
	// with an object store, its files uploaded first) or to the failure.
	Duration time.Duration
	// Acked is from the trigger to the last subtask's acknowledgement
	// (completed only): the synchronous part, in which each operator
	// writes its state back and snapshots its store while its records
	// wait. The rest of Duration is the asynchronous part (the upload to
	// an object store, the metadata), while records flow.
	Acked time.Duration
	// Size and Incremental are the state's full and newly written bytes
	// (completed only).
	Size, Incremental int64
	// Uploaded is the bytes of state files the checkpoint put into the
	// object store (0 without one; completed only): those no earlier
	// checkpoint there had.
	Uploaded int64
	// Alignment is the longest time a subtask held input channels back
	// until every channel had delivered the barrier (exactly-once
	// alignment; 0 in at-least-once mode and for subtasks with one input).
	Alignment time.Duration
	// Failure is the cause of a failed checkpoint.
	Failure string
}

// The statuses of a Record.
const (
	StatusCompleted = "COMPLETED"
	StatusFailed    = "FAILED"
)

// HistorySize is how many of the newest checkpoints a coordinator keeps
// in its history.
const HistorySize = 100

// DurationBuckets are the upper bounds of the buckets Stats counts the
// durations of completed checkpoints in (as a Prometheus histogram does).
var DurationBuckets = []time.Duration{
	10 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
	30 * time.Second, time.Minute,
}

// Durations counts the durations of completed checkpoints: Buckets[i]
// those at most DurationBuckets[i] (cumulative), Count all, Sum their
// total.
type Durations struct {
	Buckets []uint64
	Count   uint64
	Sum     time.Duration
}

func (d *Durations) observe(v time.Duration) {
	if d.Buckets == nil {
		d.Buckets = make([]uint64, len(DurationBuckets))
	}
	for i, b := range DurationBuckets {
		if v <= b {
			d.Buckets[i]++
		}
	}
	d.Count++
	d.Sum += v
}

// Add adds the counts of o to d.
func (d *Durations) Add(o Durations) {
	if d.Buckets == nil {
		d.Buckets = make([]uint64, len(DurationBuckets))
	}
	for i := range o.Buckets {
		d.Buckets[i] += o.Buckets[i]
	}
	d.Count += o.Count
	d.Sum += o.Sum
}

// record appends r to the history, dropping the oldest beyond HistorySize.
// It is called with mu held.
func (c *Coordinator) recordLocked(r Record) {
	if len(c.history) == HistorySize {
		copy(c.history, c.history[1:])
		c.history = c.history[:HistorySize-1]
	}
	c.history = append(c.history, r)
}

// History returns the newest checkpoints, oldest first (at most
// HistorySize).
func (c *Coordinator) History() []Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Record(nil), c.history...)
}

func maxAlignment(acks map[Task]SubtaskState) time.Duration {
	var m time.Duration
	for _, st := range acks {
		m = max(m, st.Alignment)
	}
	return m
}
