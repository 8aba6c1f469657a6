package exec

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestRankOperator drives one TopN subtask by hand, so the files under
// rank_testdata/ show the exact changelog each input change emits. Input
// rows are (k VARCHAR, v BIGINT, tag VARCHAR), partitioned by k and
// ordered by v. Commands:
//
//	init [start=S] [end=E] [rn] [updating] [desc] [nullsfirst] [dedup] [global]
//	     a new operator: rows S..E (default 1..3), rn: the row number is
//	     output, updating: retractions arrive, desc: ORDER BY v DESC,
//	     dedup: v is a processing-time attribute and the range 1..1 (a
//	     deduplication), global: no partition key
//	batch        one batch, a row per line "op k v tag" (v "null": NULL); prints what is emitted
//	checkpoint   a snapshot kept as the last checkpoint
//	restore      a new operator restored from the last checkpoint
//	state        the keys and rows in the store
func TestRankOperator(t *testing.T) {
	runOpTests(t, "rank_testdata", func(h *opHarness) func(*testing.T, *datadriven.TestData) string {
		h.id = "rank"
		h.newOp = func(s *subtask) (operator, error) { return newRank(s), nil }
		return func(t *testing.T, d *datadriven.TestData) string { return rankCommand(h, t, d) }
	})
}

var rankTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
	{Name: "tag", Type: types.StringType},
}

func rankCommand(h *opHarness, t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "init":
		h.close()
		scan := &planner.Scan{Table: &catalog.Table{Name: "t", Columns: rankTestInput}, Fields: []int{0, 1, 2}, Proctime: -1}
		r := &planner.Rank{Input: scan, Partition: []int{0}, Start: 1, End: 3, RankName: "rn"}
		key := planner.SortKey{Index: 1, NullsFirst: true}
		spec := &planner.RankSpec{Rank: r}
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "start":
				r.Start, _ = strconv.ParseInt(a.Vals[0], 10, 64)
			case "end":
				r.End, _ = strconv.ParseInt(a.Vals[0], 10, 64)
			case "rn":
				r.OutputRank = true
			case "updating":
				spec.InputUpdating = true
			case "desc":
				key.Desc, key.NullsFirst = true, false
			case "nullsfirst":
				key.NullsFirst = true
			case "dedup":
				scan.Proctime = 1
				r.Start, r.End = 1, 1
			case "global":
				r.Partition = nil
			default:
				t.Fatalf("init: unknown argument %s", a.Key)
			}
		}
		r.Order = []planner.SortKey{key}
		h.spec, h.out, h.job = spec, r.Schema(), nil
		h.open(state.NewMemory(), false)
		return ""
	case "batch":
		return h.process(0, testBatch(t, rankTestInput, d.Input, true, func(b []array.Builder, f []string) {
			for len(f) < 3 {
				f = append(f, "")
			}
			appendFields(t, b, f, "null")
		}))
	case "state":
		op := h.op.(*rankOp)
		if err := op.cache.Flush(); err != nil {
			t.Fatal(err)
		}
		keys, rows := 0, 0
		err := op.t.store.Scan(func(_ int, k, v []byte) error {
			if k[0] != spaceGroups {
				return nil
			}
			var p rankPart
			if err := (rankCodec{owner: "test"}).Decode(v, &p); err != nil {
				return err
			}
			keys++
			rows += len(p.rows)
			return nil
		})
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return fmt.Sprintf("keys=%d rows=%d\n", keys, rows)
	}
	return h.command(t, d)
}
