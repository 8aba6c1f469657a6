package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/functions"
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
	datadriven.Walk(t, "rank_testdata", func(t *testing.T, path string) {
		h := &rankHarness{t: t, dir: t.TempDir()}
		defer h.close()
		datadriven.RunTest(t, path, h.run)
	})
}

var rankTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
	{Name: "tag", Type: types.StringType},
}

type rankHarness struct {
	t    *testing.T
	dir  string
	spec *planner.RankSpec
	job  *Job
	op   *rankOp
	recv *subtask
	em   *emitter
	out  types.Schema
	cp   string
	n    int
}

func (h *rankHarness) close() {
	if h.op != nil {
		h.op.close()
		h.op = nil
	}
}

func (h *rankHarness) start(store state.Store, restored bool) {
	h.out = h.spec.Rank.Schema()
	op := &planner.Operator{ID: "rank", Parallelism: 1, Schema: h.out, Spec: h.spec}
	if h.job == nil {
		h.job = &Job{graph: &planner.Graph{MaxParallelism: 128}, ctx: context.Background()}
		h.job.opts.ensureDefaults()
	}
	h.recv = &subtask{inbox: make(chan Element, 1<<10)}
	sender := &subtask{job: h.job, op: op, outputs: []*output{{partition: planner.Forward, targets: []target{{task: h.recv}}}}}
	h.em = sender.emitter()
	r := newRank(sender)
	tc := &taskContext{ctx: h.job.ctx, op: op, job: h.job, mem: memory.DefaultAllocator,
		fctx: &functions.Context{Mem: memory.DefaultAllocator}, batchSize: 1024, store: store}
	if restored {
		tc.restored = &restoredState{}
	}
	if err := r.open(tc); err != nil {
		h.t.Fatal(err)
	}
	h.op = r
}

func (h *rankHarness) emitted() string {
	var b strings.Builder
	for {
		select {
		case el := <-h.recv.inbox:
			rec := el.Batch.Rec
			for i := 0; i < int(rec.NumRows()); i++ {
				var vals []string
				for j, c := range h.out {
					vals = append(vals, types.Format(c.Type, types.ValueAt(rec.Column(j), i)))
				}
				fmt.Fprintf(&b, "%s[%s]\n", el.Batch.Op(i), strings.Join(vals, ", "))
			}
			rec.Release()
		default:
			if b.Len() == 0 {
				return "(nothing)\n"
			}
			return b.String()
		}
	}
}

func (h *rankHarness) batch(input string) Batch {
	kb := array.NewStringBuilder(memory.DefaultAllocator)
	vb := array.NewInt64Builder(memory.DefaultAllocator)
	tb := array.NewStringBuilder(memory.DefaultAllocator)
	var ops []RowKind
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		for len(f) < 4 {
			f = append(f, "")
		}
		ops = append(ops, map[string]RowKind{"+I": Insert, "+U": UpdateAfter, "-U": UpdateBefore, "-D": Delete}[f[0]])
		kb.Append(f[1])
		if f[2] == "null" {
			vb.AppendNull()
		} else {
			v, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				h.t.Fatal(err)
			}
			vb.Append(v)
		}
		tb.Append(f[3])
	}
	cols := []arrow.Array{kb.NewArray(), vb.NewArray(), tb.NewArray()}
	rec := array.NewRecordBatch(rankTestInput.Arrow(), cols, int64(len(ops)))
	for _, c := range cols {
		c.Release()
	}
	return Batch{Rec: rec, Ops: ops}
}

func (h *rankHarness) run(t *testing.T, d *datadriven.TestData) string {
	h.t = t
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
		h.spec, h.job, h.n = spec, nil, 0
		h.start(state.NewMemory(), false)
		return ""
	case "batch":
		b := h.batch(d.Input)
		err := h.op.process(0, b, h.em)
		b.Rec.Release()
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return h.emitted()
	case "checkpoint":
		h.n++
		rel := fmt.Sprintf("chk-%d", h.n)
		if _, err := h.op.snapshot(&snapshotContext{id: int64(h.n), dir: h.dir, rel: rel}); err != nil {
			return "error: " + err.Error() + "\n"
		}
		h.cp = filepath.Join(h.dir, rel)
		return "ok\n"
	case "restore":
		h.close()
		work := filepath.Join(h.dir, fmt.Sprintf("work-%d", h.n))
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		s, err := state.MemoryBackend{}.Restore(work, []string{h.cp}, 0, 127)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		h.start(s, true)
		return "ok\n"
	case "state":
		if err := h.op.cache.Flush(); err != nil {
			t.Fatal(err)
		}
		keys, rows := 0, 0
		err := h.op.t.store.Scan(func(_ int, k, v []byte) error {
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
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}
