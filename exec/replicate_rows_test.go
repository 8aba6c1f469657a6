package exec

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// TestReplicateRowsOperator drives one ReplicateRows subtask by hand, so
// the files under replicate_rows_testdata/ show what each input batch
// emits. Input rows are (k VARCHAR, n BIGINT): k is copied n times. Commands:
//
//	init [net] [batch-size=N]   a new operator; net: NetUpdates (the input is an aggregate keyed by k); N: rows per output batch (default 1024)
//	batch                       one batch, a row per line "op k n" (op +I, -U, +U, -D; "null" for NULL); prints the batches emitted, "--" between two
func TestReplicateRowsOperator(t *testing.T) {
	datadriven.Walk(t, "replicate_rows_testdata", func(t *testing.T, path string) {
		h := &replicateHarness{}
		datadriven.RunTest(t, path, h.run)
	})
}

var replicateTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "n", Type: types.BigIntType},
}

type replicateHarness struct {
	op   *replicateRowsOp
	recv *subtask
	em   *emitter
}

func (h *replicateHarness) start(t *testing.T, net bool, batchSize int) {
	spec := &planner.ReplicateRowsSpec{Count: &planner.ColumnRef{Index: 1, Name: "n", T: types.BigIntType}, Width: 1, NetUpdates: net}
	op := &planner.Operator{ID: "replicate", Parallelism: 1, Schema: replicateTestInput[:1], Spec: spec}
	job := &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
	job.opts.ensureDefaults()
	h.recv = &subtask{inbox: make(chan Element, 1<<10)}
	sender := &subtask{job: job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: h.recv}}}}}
	h.em = sender.emitter()
	h.op = newReplicateRows(sender)
	tc := &taskContext{ctx: job.ctx, op: op, job: job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: batchSize}
	if err := h.op.open(tc); err != nil {
		t.Fatal(err)
	}
}

func (h *replicateHarness) emitted() string {
	var batches []string
	for {
		select {
		case el := <-h.recv.inbox:
			rec := el.Batch.Rec
			var lines []string
			for i := 0; i < int(rec.NumRows()); i++ {
				lines = append(lines, fmt.Sprintf("%s[%s]", el.Batch.Op(i), types.Format(types.StringType, types.ValueAt(rec.Column(0), i))))
			}
			rec.Release()
			batches = append(batches, strings.Join(lines, "\n"))
		default:
			if len(batches) == 0 {
				return "(nothing)\n"
			}
			return strings.Join(batches, "\n--\n") + "\n"
		}
	}
}

func (h *replicateHarness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "init":
		net, size := false, 1024
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "net":
				net = true
			case "batch-size":
				d.ScanArgs(t, "batch-size", &size)
			}
		}
		h.start(t, net, size)
		return ""
	case "batch":
		kb := array.NewStringBuilder(memory.DefaultAllocator)
		nb := array.NewInt64Builder(memory.DefaultAllocator)
		var ops []RowKind
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			op, ok := map[string]RowKind{"+I": Insert, "-U": UpdateBefore, "+U": UpdateAfter, "-D": Delete}[f[0]]
			if !ok || len(f) != 3 {
				t.Fatalf("%s: bad row %q", d.Pos, line)
			}
			ops = append(ops, op)
			if f[1] == "null" {
				kb.AppendNull()
			} else {
				kb.Append(f[1])
			}
			if f[2] == "null" {
				nb.AppendNull()
			} else {
				n, err := strconv.ParseInt(f[2], 10, 64)
				if err != nil {
					t.Fatalf("%s: %v", d.Pos, err)
				}
				nb.Append(n)
			}
		}
		cols := []arrow.Array{kb.NewArray(), nb.NewArray()}
		rec := array.NewRecordBatch(replicateTestInput.Arrow(), cols, int64(len(ops)))
		for _, c := range cols {
			c.Release()
		}
		err := h.op.process(0, Batch{Rec: rec, Ops: ops}, h.em)
		rec.Release()
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return h.emitted()
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}
