package memory

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// ErrChangesGone is the error of a follower restored to a position whose
// later commits are no longer known: the commits were made in an earlier
// session (process), whose log of changes is gone.
var ErrChangesGone = errors.New("the changes since the restored position are gone")

// commit is one commit of a followed table: its sequence number
// (manifest.Seq after it) and its changes in order.
type commit struct {
	seq     int64
	changes []change
}

// record ends a commit that changed the table (t.man.Seq is its number):
// a followed table appends cs, the changes as a follower sees them, to its
// log (retaining their batches), and the followers waiting are woken. The
// caller holds t.mu.
func (t *table) record(cs []change) {
	if t.logging {
		c := commit{seq: t.man.Seq}
		for _, x := range cs {
			if x.rec.NumRows() == 0 {
				continue
			}
			x.rec.Retain()
			c.changes = append(c.changes, x)
		}
		t.log = append(t.log, c)
	}
	close(t.changed)
	t.changed = make(chan struct{})
}

// startLog makes the table keep its commits from now on. The caller holds t.mu.
func (t *table) startLog() {
	if !t.logging {
		t.logging, t.logFrom = true, t.man.Seq
	}
}

// dropLog forgets the log and the pinned snapshots (a dropped or reset
// table). Their batches are not released: a follower still running may be
// reading them; they are Go memory, freed once nothing refers to them.
// The caller holds t.mu.
func (t *table) dropLog() {
	t.log, t.pins, t.logging = nil, nil, false
}

// follow returns the committed rows (retained: the caller releases them)
// and their sequence number, and keeps the table's later commits (log) so
// that a follower can read them. The rows stay pinned, so that a follower
// restored in the middle of them reads the same rows (snapshotAt).
func (t *table) follow() ([]arrow.RecordBatch, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.startLog()
	if t.pins == nil {
		t.pins = map[int64][]arrow.RecordBatch{}
	}
	if _, ok := t.pins[t.man.Seq]; !ok {
		t.pins[t.man.Seq] = retainAll(t.batches)
	}
	return retainAll(t.batches), t.man.Seq
}

// snapshotAt returns the rows as of commit seq (retained), for a follower
// restored while it was reading them: the committed rows if nothing was
// committed since, else the rows a follower pinned at seq in this process.
func (t *table) snapshotAt(seq int64) ([]arrow.RecordBatch, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.startLog()
	if seq == t.man.Seq {
		return retainAll(t.batches), nil
	}
	if p, ok := t.pins[seq]; ok {
		return retainAll(p), nil
	}
	return nil, t.gone(seq)
}

func (t *table) gone(seq int64) error {
	return fmt.Errorf("memory table %s: %w: the job read it up to commit %d and the table is at commit %d; "+
		"a table keeps its changes for the jobs that follow it only while the session that made them lasts",
		t.name, ErrChangesGone, seq, t.man.Seq)
}

// after returns the first commit numbered above seq; when there is none
// yet, it returns nil and a channel closed at the next commit. A position
// the log does not reach back to is ErrChangesGone.
func (t *table) after(seq int64) (*commit, <-chan struct{}, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.startLog()
	if seq == t.man.Seq {
		return nil, t.changed, nil
	}
	if seq < t.logFrom || seq > t.man.Seq {
		return nil, nil, t.gone(seq)
	}
	i := int(seq - t.logFrom) // t.log[i] is commit seq+1
	return &t.log[i], nil, nil
}

func retainAll(recs []arrow.RecordBatch) []arrow.RecordBatch {
	out := make([]arrow.RecordBatch, len(recs))
	for i, r := range recs {
		r.Retain()
		out[i] = r
	}
	return out
}
