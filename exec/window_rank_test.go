package exec

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestWindowRankOperator drives one window TopN subtask by hand, so the
// files under window_rank_testdata/ show exactly when windows fire and
// what survives a restore. Input rows are (k VARCHAR, v BIGINT,
// window_start, window_end) of one-minute TUMBLE windows, partitioned by
// the window and k, ordered by v. Times are written hh:mm:ss on
// 2024-01-01. Commands:
//
//	init [start=S] [end=E] [rn] [desc] [nokey]
//	             a new operator: rows S..E (default 1..2), rn: the row number
//	             is output, desc: ORDER BY v DESC, nokey: partitioned by the
//	             window alone
//	batch        one batch, a row per line "k v time" (v "null": NULL); prints what is emitted
//	watermark time, end, checkpoint, restore, late: as every operator test
//	state        the groups in the store, the open windows and groups held
func TestWindowRankOperator(t *testing.T) {
	runOpTests(t, "window_rank_testdata", func(h *opHarness) func(*testing.T, *datadriven.TestData) string {
		h.id, h.batchSize = "wr", 2
		h.newOp = func(s *subtask) (operator, error) { return newWindowRank(s), nil }
		return func(t *testing.T, d *datadriven.TestData) string { return windowRankCommand(h, t, d) }
	})
}

var wrTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
	{Name: "window_start", Type: types.TimestampOf(3)},
	{Name: "window_end", Type: types.TimestampOf(3)},
}

func windowRankCommand(h *opHarness, t *testing.T, d *datadriven.TestData) string {
	const size = 60e6
	switch d.Cmd {
	case "init":
		h.close()
		scan := &planner.Scan{Table: &catalog.Table{Name: "t", Columns: wrTestInput}, Fields: []int{0, 1, 2, 3}, Proctime: -1}
		r := &planner.Rank{Input: scan, Partition: []int{2, 3, 0}, Start: 1, End: 2, RankName: "rn"}
		key := planner.SortKey{Index: 1, NullsFirst: true}
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "start":
				r.Start, _ = strconv.ParseInt(a.Vals[0], 10, 64)
			case "end":
				r.End, _ = strconv.ParseInt(a.Vals[0], 10, 64)
			case "rn":
				r.OutputRank = true
			case "desc":
				key.Desc, key.NullsFirst = true, false
			case "nokey":
				r.Partition = []int{2, 3}
			default:
				t.Fatalf("init: unknown argument %s", a.Key)
			}
		}
		r.Order = []planner.SortKey{key}
		h.spec = &planner.WindowRankSpec{Rank: r, Window: planner.WindowSpec{Kind: "TUMBLE", Size: size}, StartCol: 2, EndCol: 3}
		h.out, h.job = r.Schema(), nil
		h.open(state.NewMemory(), false)
		return ""
	case "batch":
		return h.process(0, testBatch(t, wrTestInput, d.Input, false, func(b []array.Builder, f []string) {
			appendFields(t, b[:2], f[:2], "null")
			tm := windowTestTime(t, f[2])
			start := tm - floorMod(tm, size)
			b[2].(*array.TimestampBuilder).Append(arrow.Timestamp(start))
			b[3].(*array.TimestampBuilder).Append(arrow.Timestamp(start + size))
		}))
	case "state":
		op := h.op.(*windowRankOp)
		stored := 0
		err := op.t.store.Scan(func(_ int, k, v []byte) error {
			if k[0] == spaceGroups {
				stored++
			}
			return nil
		})
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return fmt.Sprintf("stored=%d; open windows=%d groups held=%d\n", stored, len(op.ends), op.groups)
	}
	return h.command(t, d)
}
