package exec

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// TestFlatMatchesAccumulators: the aggregates a group aggregate keeps in
// words (aggfn_flat.go) compute the results, and write the state, of
// their accumulator objects, row by row, over rows with NULLs, FILTERs
// and (over an updating input) retractions.
func TestFlatMatchesAccumulators(t *testing.T) {
	in := types.Schema{{Name: "v", Type: types.IntType}, {Name: "f", Type: types.DoubleType}, {Name: "b", Type: types.BooleanType}}
	bigint := types.T{Kind: types.BigInt, NotNull: true}
	call := func(f planner.AggFunc, arg int, t types.T, filter bool) planner.AggCall {
		c := planner.AggCall{Func: f, Arg: arg, T: t, Text: string(f)}
		if arg >= 0 {
			c.ArgT = in[arg].Type
		}
		if filter {
			c.HasFilter, c.Filter = true, 2
		}
		return c
	}
	calls := []planner.AggCall{
		call(planner.AggCount, -1, bigint, false), call(planner.AggCount, -1, bigint, true), call(planner.AggCount, 0, bigint, false),
		call(planner.AggSum, 0, types.IntType, false), call(planner.AggAvg, 0, types.IntType, true),
		call(planner.AggSum, 1, types.DoubleType, false), call(planner.AggAvg, 1, types.DoubleType, false),
		call(planner.AggVarSamp, 1, types.DoubleType, false), call(planner.AggStddevPop, 0, types.DoubleType, false),
		call(planner.AggBoolAnd, 2, types.BooleanType, false), call(planner.AggBoolOr, 2, types.BooleanType, false),
	}
	minMax := []planner.AggCall{call(planner.AggMin, 0, types.IntType, false), call(planner.AggMax, 0, types.IntType, true)}
	rng := rand.New(rand.NewSource(1))
	const n = 400
	vb, fb, bb := array.NewInt32Builder(memory.DefaultAllocator), array.NewFloat64Builder(memory.DefaultAllocator), array.NewBooleanBuilder(memory.DefaultAllocator)
	for i := 0; i < n; i++ {
		if rng.Intn(5) == 0 {
			vb.AppendNull()
		} else {
			vb.Append(int32(rng.Intn(2001) - 1000))
		}
		if rng.Intn(5) == 0 {
			fb.AppendNull()
		} else {
			fb.Append(rng.NormFloat64() * 100)
		}
		if rng.Intn(5) == 0 {
			bb.AppendNull()
		} else {
			bb.Append(rng.Intn(3) > 0)
		}
	}
	cols := []arrow.Array{vb.NewArray(), fb.NewArray(), bb.NewArray()}
	rec := array.NewRecordBatch(in.Arrow(), cols, n)
	defer rec.Release()
	for _, c := range cols {
		c.Release()
	}
	for _, updating := range []bool{false, true} {
		aggs := calls
		if !updating {
			aggs = append(append([]planner.AggCall(nil), calls...), minMax...)
		}
		a := &groupAggOp{spec: &planner.Aggregate{Aggs: aggs}, updating: updating}
		if err := a.init(); err != nil {
			t.Fatal(err)
		}
		if !a.flat {
			t.Fatalf("updating %v: the aggregates are not flat", updating)
		}
		objs, err := newAggFold(aggs, aggMode{updating: updating, spaces: true})
		if err != nil {
			t.Fatal(err)
		}
		var g aggGroup
		w := a.initGroup(&g)
		accs := objs.newAccs(nil)
		a.fold.read(rec)
		objs.read(rec)
		var x foldCtx
		got, want := make([]scalar, len(aggs)), make([]scalar, len(aggs))
		var added []int
		for step := 0; step < 2*n; step++ {
			i, sign := step%n, int64(1)
			if step >= n {
				if !updating {
					break
				}
				// Retract the rows in another order than they came.
				k := rng.Intn(len(added))
				i, sign = added[k], -1
				added = append(added[:k], added[k+1:]...)
			} else {
				added = append(added, i)
			}
			w[0] += uint64(sign)
			if err := a.fold.addFlat(w, &x, i, sign); err != nil {
				t.Fatal(err)
			}
			if err := objs.add(accs, &x, i, sign); err != nil {
				t.Fatal(err)
			}
			if err := a.results(&g, got); err != nil {
				t.Fatal(err)
			}
			for j, acc := range accs {
				if err := acc.result(&want[j]); err != nil {
					t.Fatal(err)
				}
			}
			if !sameResults(got, want) {
				t.Fatalf("updating %v, step %d: words give %+v, accumulators %+v", updating, step, got, want)
			}
			if ge, we := a.fold.encodeFlat(nil, w), objs.encodeAccs(nil, accs); !bytes.Equal(ge, we) {
				t.Fatalf("updating %v, step %d: words encode as %x, accumulators as %x", updating, step, ge, we)
			}
		}
	}
}
