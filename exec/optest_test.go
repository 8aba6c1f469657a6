package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// opHarness is what the datadriven tests of one operator subtask share: it
// opens the operator over a store, feeds it batches and watermarks by hand,
// takes and restores checkpoints and prints the changelog it emits. A test
// sets what is its own (the spec, the constructor, how rows print), runs
// its own commands and passes the others to command.
type opHarness struct {
	t   *testing.T
	dir string // where checkpoints are written

	// The operator, set before open.
	id        string
	spec      planner.Spec
	out       types.Schema
	newOp     func(sender *subtask) (operator, error)
	batchSize int // rows per output batch; 0: 1024

	// cell prints a value of the output (nil: types.Format); batches puts
	// "--" between the batches emitted.
	cell    func(typ types.T, col arrow.Array, i int) string
	batches bool

	job  *Job // kept by restore; nil: open makes a new one
	recv *subtask
	em   *emitter
	op   operator
	tc   *taskContext // what op was opened with
	cp   string       // the last checkpoint's directory
	n    int          // checkpoints taken
}

// runOpTests runs every file under dir against a fresh harness, with the
// command handler that setup returns for it.
func runOpTests(t *testing.T, dir string, setup func(h *opHarness) func(*testing.T, *datadriven.TestData) string) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		h := &opHarness{t: t, dir: t.TempDir()}
		defer h.close()
		run := setup(h)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			h.t = t
			return run(t, d)
		})
	})
}

func (h *opHarness) close() {
	if h.op != nil {
		h.tc.closeOperator(h.op)
		h.op = nil
	}
}

// open builds the operator over store (restored says it holds a
// checkpoint) and opens it.
func (h *opHarness) open(store state.Store, restored bool) {
	op := &planner.Operator{ID: h.id, Parallelism: 1, Schema: h.out, Spec: h.spec}
	if h.job == nil {
		h.job = &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
		h.job.opts.ensureDefaults()
	}
	h.recv = &subtask{inbox: make(chan Element, 1<<10)}
	sender := &subtask{job: h.job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: h.recv}}}}}
	h.em = sender.emitter()
	o, err := h.newOp(sender)
	if err != nil {
		h.t.Fatal(err)
	}
	batchSize := h.batchSize
	if batchSize == 0 {
		batchSize = 1024
	}
	tc := &taskContext{ctx: h.job.ctx, op: op, job: h.job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: batchSize, store: store}
	if restored {
		tc.restored = &restoredState{}
	}
	if err := o.open(tc); err != nil {
		h.t.Fatal(err)
	}
	h.op, h.tc = o, tc
}

// command runs the commands every operator test knows:
//
//	watermark time  a watermark advance; prints what is emitted
//	end             end of input; prints what is emitted
//	checkpoint      a snapshot kept as the last checkpoint
//	restore         a new operator restored from the last checkpoint
//	late            the late records counted so far
func (h *opHarness) command(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "watermark":
		return h.watermark(windowTestTime(t, d.CmdArgs[0].Key))
	case "end":
		return h.result(h.op.endInput(h.em))
	case "checkpoint":
		return h.result(h.checkpoint(), "ok\n")
	case "restore":
		return h.restore()
	case "late":
		return fmt.Sprintf("%d\n", h.job.lateRecords.Load())
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}

// result is "error: ..." for err, else ok (what is emitted, if not given).
func (h *opHarness) result(err error, ok ...string) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	if len(ok) > 0 {
		return ok[0]
	}
	return h.emitted()
}

// process feeds b to input and releases it; it prints what is emitted.
func (h *opHarness) process(input int, b Batch) string {
	err := h.op.process(input, b, h.em)
	b.Rec.Release()
	return h.result(err)
}

// watermark advances the watermark to wm; it prints what is emitted.
func (h *opHarness) watermark(wm int64) string {
	return h.result(h.op.(watermarkOperator).watermark(wm, h.em))
}

// snapshotNow takes op's part of checkpoint cp, both its parts when its
// store checkpoints asynchronously.
func snapshotNow(tc *taskContext, op operator, cp *snapshotContext) error {
	_, rest, err := tc.snapshot(op, cp)
	if err == nil && rest != nil {
		_, err = rest()
	}
	return err
}

// checkpoint snapshots the operator and keeps it as the last checkpoint.
func (h *opHarness) checkpoint() error {
	h.n++
	rel := fmt.Sprintf("chk-%d", h.n)
	if err := snapshotNow(h.tc, h.op, &snapshotContext{id: int64(h.n), dir: h.dir, rel: rel}); err != nil {
		return err
	}
	h.cp = filepath.Join(h.dir, rel)
	return nil
}

// restore opens a new operator over the last checkpoint; it prints "ok".
func (h *opHarness) restore() string {
	h.close()
	work := filepath.Join(h.dir, fmt.Sprintf("work-%d", h.n))
	if err := os.MkdirAll(work, 0o755); err != nil {
		h.t.Fatal(err)
	}
	s, err := state.MemoryBackend{}.Restore(work, []string{h.cp}, 0, 127)
	if err != nil {
		return h.result(err)
	}
	h.open(s, true)
	return "ok\n"
}

// emitted prints the rows emitted since the last call, "op[v, ...]" a line,
// or "(nothing)".
func (h *opHarness) emitted() string {
	var batches []string
	for {
		select {
		case el := <-h.recv.inbox:
			if el.Kind == KindWatermark {
				batches = append(batches, "watermark "+time.UnixMicro(el.Watermark).UTC().Format("15:04:05.000"))
				continue
			}
			rec := el.Batch.Rec
			var lines []string
			for i := 0; i < int(rec.NumRows()); i++ {
				var vals []string
				for j, c := range h.out {
					if h.cell != nil {
						vals = append(vals, h.cell(c.Type, rec.Column(j), i))
					} else {
						vals = append(vals, types.Format(c.Type, types.ValueAt(rec.Column(j), i)))
					}
				}
				lines = append(lines, fmt.Sprintf("%s[%s]", el.Batch.Op(i), strings.Join(vals, ", ")))
			}
			rec.Release()
			if len(lines) > 0 || h.batches {
				batches = append(batches, strings.Join(lines, "\n"))
			}
		default:
			if len(batches) == 0 {
				return "(nothing)\n"
			}
			sep := "\n"
			if h.batches {
				sep = "\n--\n"
			}
			return strings.Join(batches, sep) + "\n"
		}
	}
}

// testRowKinds are the row kinds as the test files write them.
var testRowKinds = map[string]RowKind{"+I": Insert, "-U": UpdateBefore, "+U": UpdateAfter, "-D": Delete}

// testBatch builds a batch of schema's rows from input, a row per line of
// fields; with ops, each line opens with the row's kind. row appends one
// line's other fields, a builder per column of schema.
func testBatch(t *testing.T, schema types.Schema, input string, ops bool, row func(b []array.Builder, f []string)) Batch {
	rb := array.NewRecordBuilder(memory.DefaultAllocator, schema.Arrow())
	defer rb.Release()
	var kinds []RowKind
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		if ops {
			k, ok := testRowKinds[f[0]]
			if !ok {
				t.Fatalf("bad row %q", line)
			}
			kinds, f = append(kinds, k), f[1:]
		}
		row(rb.Fields(), f)
	}
	return Batch{Rec: rb.NewRecordBatch(), Ops: kinds}
}

// appendFields appends f to b, a field a builder: a string, a BIGINT in
// decimal, a BOOLEAN (true, false) or a time hh:mm:ss[.fff] on 2024-01-01; a field equal to null is
// a NULL.
func appendFields(t *testing.T, b []array.Builder, f []string, null string) {
	for i, s := range f {
		if s == null {
			b[i].AppendNull()
			continue
		}
		switch b := b[i].(type) {
		case *array.StringBuilder:
			b.Append(s)
		case *array.Int64Builder:
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			b.Append(v)
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(windowTestTime(t, s)))
		case *array.BooleanBuilder:
			v, err := strconv.ParseBool(s)
			if err != nil {
				t.Fatal(err)
			}
			b.Append(v)
		default:
			t.Fatalf("no test field for %T", b)
		}
	}
}
