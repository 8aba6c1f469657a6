package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/datadriven"

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
	runOpTests(t, "replicate_rows_testdata", func(h *opHarness) func(*testing.T, *datadriven.TestData) string {
		h.id, h.out, h.batches = "replicate", replicateTestInput[:1], true
		h.newOp = func(s *subtask) (operator, error) { return newReplicateRows(s), nil }
		return func(t *testing.T, d *datadriven.TestData) string { return replicateCommand(h, t, d) }
	})
}

var replicateTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "n", Type: types.BigIntType},
}

func replicateCommand(h *opHarness, t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "init":
		h.close()
		net, size := false, 1024
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "net":
				net = true
			case "batch-size":
				d.ScanArgs(t, "batch-size", &size)
			}
		}
		h.spec = &planner.ReplicateRowsSpec{Count: &planner.ColumnRef{Index: 1, Name: "n", T: types.BigIntType}, Width: 1, NetUpdates: net}
		h.batchSize, h.job = size, nil
		h.open(nil, false)
		return ""
	case "batch":
		return h.process(0, testBatch(t, replicateTestInput, d.Input, true, func(b []array.Builder, f []string) {
			if len(f) != 2 {
				t.Fatalf("%s: bad row %q", d.Pos, f)
			}
			appendFields(t, b, f, "null")
		}))
	}
	return h.command(t, d)
}
