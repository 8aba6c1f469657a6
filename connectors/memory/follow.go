package memory

import (
	"context"
	"encoding/binary"
	"io"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/connectors/internal/arrowutil"
	"github.com/streamsql/streamsql/connectors/internal/option"
	"github.com/streamsql/streamsql/connectors/internal/statecodec"
	"github.com/streamsql/streamsql/exec"
)

// OptScanMode is the option (a table hint, or WITH ('connector' = 'memory', ...))
// saying how a scan reads the table: ModeSnapshot, ModeFollow or ModeReplay.
const OptScanMode = "scan.mode"

// The values of OptScanMode.
const (
	// ModeSnapshot (the default) reads the rows committed when the scan
	// opens: a bounded input.
	ModeSnapshot = "snapshot"
	// ModeFollow reads those rows, then every later commit as changes
	// (+I, -U, +U, -D) in commit order, until the job is stopped: an
	// unbounded, updating input.
	ModeFollow = "follow"
	// ModeReplay reads the rows committed when the scan opens as an
	// unbounded input (planned as a stream: streaming operators), in
	// batches of at most the job's batch size, then ends.
	ModeReplay = "replay"
)

// scanMode returns the scan mode the options give (checked by validate).
func scanMode(opts map[string]string) string {
	return option.String(opts, OptScanMode, ModeSnapshot)
}

func validate(t *catalog.Table) error {
	_, err := option.Enum(t.Options, OptScanMode, ModeSnapshot, ModeSnapshot, ModeFollow, ModeReplay)
	return err
}

// follower is a scan in ModeFollow or ModeReplay. Subtask 0 reads
// everything, in order (a change must not overtake the row it removes);
// the other subtasks end at once.
type follower struct {
	spec   exec.TableSpec
	schema *arrow.Schema
	follow bool // ModeFollow; else ModeReplay
	t      *table
	snap   []arrow.RecordBatch // the rows as of commit seq, while they are read
	pos    followPos
}

// followPos is the position of a follower: in the rows as of commit seq
// (batch, row), then (inLog) in the commits after commit next (the
// change part of commit next+1, its row prow).
type followPos struct {
	seq, batch, row  int64
	inLog            bool
	next, part, prow int64
}

func newFollower(spec exec.TableSpec, follow bool) *follower {
	return &follower{spec: spec, schema: spec.ProducedSchema().Arrow(), follow: follow}
}

func (s *follower) Open(context.Context) error {
	if s.spec.Subtask > 0 {
		return nil
	}
	t, err := open(s.spec.DataDir, s.spec.Table, s.spec.Schema)
	if err != nil {
		return err
	}
	s.t = t
	switch {
	case s.pos == (followPos{}):
		s.snap, s.pos.seq = t.follow()
	case !s.pos.inLog:
		s.snap, err = t.snapshotAt(s.pos.seq)
	default:
		_, _, err = t.after(s.pos.next)
	}
	return err
}

// batchRows is the most rows a batch of the follower holds.
func (s *follower) batchRows() int64 { return int64(max(s.spec.BatchSize, 1)) }

func (s *follower) Next(ctx context.Context) (exec.Batch, error) {
	if s.t == nil {
		return exec.Batch{}, io.EOF
	}
	for !s.pos.inLog {
		if s.pos.batch >= int64(len(s.snap)) {
			releaseAll(s.snap)
			s.snap = nil
			s.pos.inLog, s.pos.next = true, s.pos.seq
			if !s.follow {
				s.t = nil
				return exec.Batch{}, io.EOF
			}
			break
		}
		b := s.snap[s.pos.batch]
		if s.pos.row >= b.NumRows() {
			s.pos.batch, s.pos.row = s.pos.batch+1, 0
			continue
		}
		end := min(b.NumRows(), s.pos.row+s.batchRows())
		out := s.slice(b, nil, s.pos.row, end)
		s.pos.row = end
		return out, nil
	}
	for {
		c, wait, err := s.t.after(s.pos.next)
		if err != nil {
			return exec.Batch{}, err
		}
		if c == nil {
			timer := time.NewTimer(100 * time.Millisecond)
			select {
			case <-wait:
				timer.Stop()
				continue
			case <-timer.C:
				return exec.Batch{}, exec.ErrNoData
			case <-ctx.Done():
				timer.Stop()
				return exec.Batch{}, ctx.Err()
			}
		}
		if s.pos.part >= int64(len(c.changes)) {
			s.pos.next, s.pos.part, s.pos.prow = c.seq, 0, 0
			continue
		}
		x := c.changes[s.pos.part]
		if s.pos.prow >= x.rec.NumRows() {
			s.pos.part, s.pos.prow = s.pos.part+1, 0
			continue
		}
		end := min(x.rec.NumRows(), s.pos.prow+s.batchRows())
		out := s.slice(x.rec, x.ops, s.pos.prow, end)
		s.pos.prow = end
		return out, nil
	}
}

// slice returns rows [from, to) of rec, of the fields the scan reads, with
// their ops (nil: all +I).
func (s *follower) slice(rec arrow.RecordBatch, ops []exec.RowKind, from, to int64) exec.Batch {
	part := rec.NewSlice(from, to)
	// A slice counts its NULLs on first use and caches the count: count
	// them here, before the batch may reach several operators at once.
	for _, c := range part.Columns() {
		c.NullN()
	}
	out := exec.Batch{Rec: arrowutil.Project(s.schema, part, s.spec.Fields)}
	part.Release()
	if ops != nil {
		out.Ops = slices.Clone(ops[from:to])
	}
	return out
}

// The version of a follower's snapshot (checkpoint.AppendStateHeader):
// 2, the uvarints seq, batch, row, inLog (0 or 1), next, part, prow of
// followPos. (Version 1 is the snapshot scan's.)
const followVersion = 2

func (s *follower) Snapshot() ([]byte, error) { return encodeFollow(s.pos), nil }

func encodeFollow(p followPos) []byte {
	b := checkpoint.AppendStateHeader(nil, followVersion)
	inLog := int64(0)
	if p.inLog {
		inLog = 1
	}
	for _, v := range []int64{p.seq, p.batch, p.row, inLog, p.next, p.part, p.prow} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	return b
}

// decodeFollow reads a follower's snapshot of table: another version
// (a snapshot scan's position, say) or a layout that does not fit is
// checkpoint.ErrIncompatibleState.
func decodeFollow(table string, state []byte) (followPos, error) {
	owner := "memory table " + table + " (followed)"
	version, body, err := checkpoint.ReadStateHeader(state, owner, followVersion, followVersion)
	if err != nil {
		return followPos{}, err
	}
	var vs [7]int64
	for i := range vs {
		n, k := binary.Uvarint(body)
		if k <= 0 || n > 1<<50 {
			return followPos{}, statecodec.Incompatible(owner, version, "bad position")
		}
		vs[i], body = int64(n), body[k:]
	}
	if len(body) > 0 || vs[3] > 1 {
		return followPos{}, statecodec.Incompatible(owner, version, "bad position")
	}
	return followPos{seq: vs[0], batch: vs[1], row: vs[2], inLog: vs[3] == 1, next: vs[4], part: vs[5], prow: vs[6]}, nil
}

func (s *follower) Restore(state []byte) error {
	p, err := decodeFollow(s.spec.Table, state)
	if err != nil {
		return err
	}
	s.pos = p
	return nil
}

func (s *follower) Close() error {
	releaseAll(s.snap)
	s.snap, s.t = nil, nil
	return nil
}
