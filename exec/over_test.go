package exec

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestOverOperator drives one event-time OVER aggregation subtask by hand,
// so the files under over_testdata/ show what each batch and watermark
// emits. Input rows are (k VARCHAR, v BIGINT, ts TIMESTAMP), partitioned
// by k, ordered by ts; the aggregates are SUM(v), COUNT(*) and MAX(v).
// Commands:
//
//	init rows=N | range=S | unbounded [range] [lag=L]
//	             a new operator: ROWS BETWEEN N PRECEDING, RANGE BETWEEN
//	             INTERVAL 'S' SECOND PRECEDING, or UNBOUNDED PRECEDING
//	             (ROWS, or RANGE with the range flag), AND CURRENT ROW;
//	             lag=L adds LAG(v, L) after the aggregates
//	batch        one batch, a row per line "k v ts" (v "null": NULL; ts in
//	             seconds); prints what is emitted
//	watermark S  the watermark moves to S seconds; prints what is emitted
//	end          the end of the input
//	checkpoint   a snapshot kept as the last checkpoint
//	restore      a new operator restored from the last checkpoint
//	state        the keys, retained and pending rows in the store
func TestOverOperator(t *testing.T) {
	runOpTests(t, "over_testdata", func(h *opHarness) func(*testing.T, *datadriven.TestData) string {
		h.id = "over"
		h.newOp = func(s *subtask) (operator, error) { return newOver(s) }
		h.cell = func(typ types.T, col arrow.Array, i int) string {
			if typ.Kind == types.Timestamp { // ts, in seconds
				return strconv.FormatInt(int64(col.(*array.Timestamp).Value(i))/1e6, 10)
			}
			return types.Format(typ, types.ValueAt(col, i))
		}
		return func(t *testing.T, d *datadriven.TestData) string { return overCommand(h, t, d) }
	})
}

var overTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
	{Name: "ts", Type: types.TimestampOf(3)},
}

func overCommand(h *opHarness, t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "init":
		h.close()
		scan := &planner.Scan{Table: &catalog.Table{Name: "t", Columns: overTestInput}, Fields: []int{0, 1, 2}, Proctime: -1}
		o := &planner.Over{Input: scan, Partition: []int{0}, Order: []planner.SortKey{{Index: 2, NullsFirst: true}}, Rowtime: true}
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "rows":
				o.Frame.Rows = true
				o.Frame.Start, _ = strconv.ParseInt(a.Vals[0], 10, 64)
			case "range":
				if len(a.Vals) > 0 {
					s, _ := strconv.ParseInt(a.Vals[0], 10, 64)
					o.Frame.Start, o.Interval = s*1e6, true
				}
			case "unbounded":
				o.Frame.Rows, o.Frame.StartUnbounded = true, true
			case "lag":
				n, _ := strconv.ParseInt(a.Vals[0], 10, 64)
				o.Funcs = append(o.Funcs, planner.WindowCall{Func: planner.WinLag, Arg: 1, Default: -1, Offset: n, T: types.BigIntType.Nullable(), Name: "lag"})
			default:
				t.Fatalf("init: unknown argument %s", a.Key)
			}
		}
		if d.HasArg("range") && d.HasArg("unbounded") {
			o.Frame.Rows = false
		}
		o.Aggs = []planner.AggCall{
			{Func: planner.AggSum, Arg: 1, ArgT: types.BigIntType, T: types.BigIntType.Nullable(), Name: "s"},
			{Func: planner.AggCount, Arg: -1, T: types.T{Kind: types.BigInt, NotNull: true}, Name: "c"},
			{Func: planner.AggMax, Arg: 1, ArgT: types.BigIntType, T: types.BigIntType.Nullable(), Name: "mx"},
		}
		h.spec, h.out, h.job = &planner.OverSpec{Over: o}, o.Schema(), nil
		h.open(state.NewMemory(), false)
		return ""
	case "batch":
		return h.process(0, testBatch(t, overTestInput, d.Input, false, func(b []array.Builder, f []string) {
			appendFields(t, b[:2], f[:2], "null")
			s, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			b[2].(*array.TimestampBuilder).Append(arrow.Timestamp(s * 1e6))
		}))
	case "watermark":
		s, _ := strconv.ParseInt(d.CmdArgs[0].Key, 10, 64)
		return h.watermark(s * 1e6)
	case "restore":
		if out := h.restore(); out != "ok\n" {
			return out
		}
		return fmt.Sprintf("ok, watermark %d\n", h.op.(*overOp).wm/1e6)
	case "state":
		op := h.op.(*overOp)
		if err := op.cache.Flush(); err != nil {
			t.Fatal(err)
		}
		var lines []string
		codec := overCodec{fold: op.fold, owner: "test", hist: op.lagRows > 0}
		err := op.t.store.Scan(func(_ int, k, v []byte) error {
			if k[0] != spaceGroups {
				return nil
			}
			var p overPart
			if err := codec.Decode(v, &p); err != nil {
				return err
			}
			line := fmt.Sprintf("key %q: retained %d, pending %d", k[len(k)-1:], p.done, len(p.rows)-p.done)
			if codec.hist {
				line += fmt.Sprintf(", kept for LAG %d", len(p.hist))
			}
			lines = append(lines, line)
			return nil
		})
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return strings.Join(lines, "\n") + "\n"
	}
	return h.command(t, d)
}
