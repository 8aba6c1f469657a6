package exec

import (
	"encoding/hex"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/cockroachdb/datadriven"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// TestWindowJoinOperator drives one window join subtask by hand, so the
// files under window_join_testdata/ show exactly when windows fire. Each
// input's rows are (k VARCHAR, v BIGINT, window_start, window_end) of
// TUMBLE windows, joined on k (and the window). Times are written
// hh:mm:ss on 2024-01-01. Commands:
//
//	init type=inner|left|right|full|semi|anti size=60   a new operator (window size in seconds)
//	batch side=left|right    one batch, a row per line "k v time" (k "null": a NULL key); prints what is emitted
//	watermark time           a watermark advance; prints what is emitted
//	end                      end of input; prints what is emitted
//	checkpoint               snapshot into a checkpoint and keep it
//	restore                  a new operator restored from the last checkpoint
//	state                    rows in the store, open windows and rows held
//	spill                    every open window's rows to the store, none held (they fire from the store)
//	late                     the late records counted so far
//	dump                     the stored rows: "kg key value" in hex, in key order
//	load                     a new operator restored from rows given as dump prints them (and this build's layout entry)
func TestWindowJoinOperator(t *testing.T) {
	runOpTests(t, "window_join_testdata", func(h *opHarness) func(*testing.T, *datadriven.TestData) string {
		wj := &wjHarness{opHarness: h}
		h.id, h.batchSize = "wj", 2
		h.newOp = func(s *subtask) (operator, error) { return newWindowJoin(s) }
		return wj.run
	})
}

var wjTestInput = types.Schema{
	{Name: "k", Type: types.StringType},
	{Name: "v", Type: types.BigIntType},
	{Name: "window_start", Type: types.TimestampOf(3)},
	{Name: "window_end", Type: types.TimestampOf(3)},
}

type wjHarness struct {
	*opHarness
	size int64 // the TUMBLE windows' size
}

// setSpec sets the spec and output of a join of type typ.
func (h *wjHarness) setSpec(typ planner.WindowJoinType) {
	pair := append(types.Schema{}, wjTestInput...)
	for _, c := range wjTestInput {
		c.Name += "0"
		pair = append(pair, c)
	}
	h.out = pair
	if typ.LeftOnly() {
		h.out = wjTestInput
	}
	h.spec = &planner.WindowJoinSpec{
		Type: typ, Window: planner.WindowSpec{Kind: "TUMBLE", Size: h.size},
		LeftKeys: []int{0}, RightKeys: []int{0}, LeftHash: []int{0}, RightHash: []int{0},
		LeftStart: 2, LeftEnd: 3, RightStart: 2, RightEnd: 3,
		LeftWidth: 4, RightWidth: 4, LeftSchema: wjTestInput, RightSchema: wjTestInput, PairSchema: pair,
	}
}

func (h *wjHarness) run(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "init":
		h.close()
		typ := planner.WindowInner
		h.size = 60e6
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "type":
				typ = map[string]planner.WindowJoinType{"inner": planner.WindowInner, "left": planner.WindowLeft,
					"right": planner.WindowRight, "full": planner.WindowFull, "semi": planner.WindowSemi, "anti": planner.WindowAnti}[a.Vals[0]]
			case "size":
				n, _ := strconv.Atoi(a.Vals[0])
				h.size = int64(n) * 1e6
			}
		}
		h.setSpec(typ)
		h.job = nil
		h.open(state.NewMemory(), false)
		return ""
	case "batch":
		side := 0
		if d.CmdArgs[0].Vals[0] == "right" {
			side = 1
		}
		return h.process(side, testBatch(t, wjTestInput, d.Input, false, func(b []array.Builder, f []string) {
			appendFields(t, b[:2], f[:2], "null")
			tm := windowTestTime(t, f[2])
			start := tm - floorMod(tm, h.size)
			b[2].(*array.TimestampBuilder).Append(arrow.Timestamp(start))
			b[3].(*array.TimestampBuilder).Append(arrow.Timestamp(start + h.size))
		}))
	case "state":
		op := h.op.(*windowJoinOp)
		stored := [2]int{}
		op.t.store.Scan(func(_ int, k, _ []byte) error {
			switch k[0] {
			case spaceJoinLeft:
				stored[0]++
			case spaceJoinRight:
				stored[1]++
			}
			return nil
		})
		return fmt.Sprintf("stored left=%d right=%d; open windows=%d rows held=%d\n", stored[0], stored[1], len(op.ends), op.rows)
	case "spill":
		// Every open window's rows written to the store and dropped from
		// memory, as shrink does past the share: they fire from the store.
		op := h.op.(*windowJoinOp)
		if err := op.storeNew(); err != nil {
			return h.result(err)
		}
		for _, w := range op.windows {
			op.spill(w)
		}
		return "ok\n"
	case "dump":
		var lines []string
		h.op.(*windowJoinOp).t.store.Scan(func(kg int, k, v []byte) error {
			if k[0] == spaceJoinLeft || k[0] == spaceJoinRight {
				lines = append(lines, fmt.Sprintf("%d %x %x", kg, k, v))
			}
			return nil
		})
		sort.Strings(lines)
		return strings.Join(lines, "\n") + "\n"
	case "load":
		h.close()
		store := state.NewMemory()
		var wb state.WriteBatch
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			f := strings.Fields(line)
			kg, _ := strconv.Atoi(f[0])
			k, err1 := hex.DecodeString(f[1])
			v, err2 := hex.DecodeString(f[2])
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: bad line %q", d.Pos, line)
			}
			wb.Put(kg, k, v)
		}
		if err := store.Apply(&wb); err != nil {
			t.Fatal(err)
		}
		h.open(store, false)
		if err := h.tc.keyed.writeMeta(); err != nil {
			t.Fatal(err)
		}
		h.op = nil // its store is the one restored
		h.open(store, true)
		return "ok\n"
	}
	return h.command(t, d)
}

// TestWindowJoinSpilledFires: a window whose rows went to the store fires
// from it a chunk at a time (fireSpilled) with the output of the same
// window fired from memory (fireWindow), for every join type, over random
// rows: keys of several rows a side, keys of one side only, NULL keys, and
// spills after some of the batches.
func TestWindowJoinSpilledFires(t *testing.T) {
	types := []string{"inner", "left", "right", "full", "semi", "anti"}
	for seed := int64(1); seed <= 4; seed++ {
		for _, typ := range types {
			rng := rand.New(rand.NewSource(seed))
			var batches []struct {
				side  string
				input string
			}
			for b := 0; b < 8; b++ {
				var lines []string
				for i, n := 0, 1+rng.Intn(6); i < n; i++ {
					k := []string{"a", "b", "c", "d", "e", "null"}[rng.Intn(6)]
					lines = append(lines, fmt.Sprintf("%s %d 00:0%d:%02d", k, rng.Intn(100), rng.Intn(2), rng.Intn(60)))
				}
				side := []string{"left", "right"}[rng.Intn(2)]
				batches = append(batches, struct {
					side  string
					input string
				}{side, strings.Join(lines, "\n")})
			}
			spillAt := map[int]bool{rng.Intn(8): true, rng.Intn(8): true}
			run := func(spill bool) []string {
				h := &opHarness{t: t, dir: t.TempDir()}
				defer h.close()
				wj := &wjHarness{opHarness: h}
				h.id, h.batchSize = "wj", 2
				h.newOp = func(s *subtask) (operator, error) { return newWindowJoin(s) }
				do := func(cmd, input string) string {
					d := &datadriven.TestData{Cmd: cmd, Input: input}
					if f := strings.Fields(cmd); len(f) > 1 {
						d.Cmd = f[0]
						kv := strings.SplitN(f[1], "=", 2)
						if len(kv) == 2 {
							d.CmdArgs = []datadriven.CmdArg{{Key: kv[0], Vals: []string{kv[1]}}}
						} else {
							d.CmdArgs = []datadriven.CmdArg{{Key: f[1]}}
						}
					}
					return wj.run(t, d)
				}
				do("init type="+typ, "")
				var out []string
				for i, b := range batches {
					out = append(out, do("batch side="+b.side, b.input))
					if spill && spillAt[i] {
						do("spill", "")
					}
				}
				out = append(out, do("watermark 00:00:59.999", ""), do("end", ""))
				var rows []string
				for _, o := range out {
					for _, l := range strings.Split(strings.TrimSpace(o), "\n") {
						if l != "(nothing)" && l != "" {
							rows = append(rows, l)
						}
					}
				}
				sort.Strings(rows)
				if st := do("state", ""); !strings.HasPrefix(st, "stored left=0 right=0; open windows=0 rows held=0") {
					t.Errorf("seed %d %s (spill %v): after the last window: %s", seed, typ, spill, st)
				}
				return rows
			}
			want, got := run(false), run(true)
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Errorf("seed %d %s: fired from the store\n%s\nfrom memory\n%s", seed, typ, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
}
