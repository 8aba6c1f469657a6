package functions

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// TestCaseWordsMatchPick checks the word-at-a-time CASE of fixed-width
// types (caseFixed) against pick, which decides row by row, over batches
// of up to 300 rows at random offsets: conditions TRUE, FALSE or NULL at
// random, runs of TRUE longer than a word, constant conditions and
// branches, NULL branches, with and without ELSE.
func TestCaseWordsMatchPick(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, ts := range []string{"TINYINT", "INT", "BIGINT", "DOUBLE", "DECIMAL(10, 2)", "DATE", "TIMESTAMP(3)"} {
		ty := mustParse(t, ts).Nullable()
		t.Run(ts, func(t *testing.T) {
			for round := range 200 {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				ctx := &Context{Mem: mem}
				n := 1 + r.Intn(300)
				whens := 1 + r.Intn(3)
				hasElse := r.Intn(3) > 0
				var args []Vec
				for range whens {
					args = append(args, randCaseArg(r, mem, types.BooleanType, n), randCaseArg(r, mem, ty, n))
				}
				if hasElse {
					args = append(args, randCaseArg(r, mem, ty, n))
				}
				got, ok := caseKernel(ctx, ty, args, hasElse, n)
				if !ok {
					t.Fatalf("no word kernel for %s", ty)
				}
				choice := make([]int16, n)
				for i := range n {
					choice[i] = -1
					k := 0
					for ; k < whens; k++ {
						if isValid(args[2*k], i) && boolAt(args[2*k], i) {
							choice[i] = int16(2*k + 1)
							break
						}
					}
					if k == whens && hasElse {
						choice[i] = int16(len(args) - 1)
					}
				}
				want := pick(ctx, ty, args, choice, n)
				if got.Array.NullN() != want.Array.NullN() {
					t.Fatalf("round %d: %d NULLs, want %d", round, got.Array.NullN(), want.Array.NullN())
				}
				for i := range n {
					g, w := formatValue(ty, types.ValueAt(got.Array, i)), formatValue(ty, types.ValueAt(want.Array, i))
					if g != w {
						t.Fatalf("round %d (%d rows, %d WHENs, ELSE %v): row %d is %s, want %s", round, n, whens, hasElse, i, g, w)
					}
				}
				if vals := fmt.Sprint(got.Array); vals != fmt.Sprint(want.Array) {
					t.Fatalf("round %d: %s, want %s", round, vals, want.Array)
				}
				got.Release()
				want.Release()
				releaseAll(args)
				mem.AssertSize(t, 0)
			}
		})
	}
}

// randCaseArg returns a CASE argument of type ty over n rows: one time in
// six a constant (NULL among them), else an array at a random offset
// whose rows come in runs (a condition TRUE for a run longer than a word).
func randCaseArg(r *rand.Rand, mem memory.Allocator, ty types.T, n int) Vec {
	if r.Intn(6) == 0 {
		return ConstVec(ty, randValue(r, ty))
	}
	off := r.Intn(70)
	b := array.NewBuilder(mem, ty.ArrowType())
	defer b.Release()
	v := randValue(r, ty)
	for range off + n {
		if r.Intn(40) == 0 {
			v = randValue(r, ty) // a new run
		} else if ty.Kind != types.Boolean && r.Intn(2) == 0 {
			v = randValue(r, ty)
		}
		types.AppendValue(b, v)
	}
	full := b.NewArray()
	defer full.Release()
	return ArrayVec(ty, array.NewSlice(full, int64(off), int64(off+n)))
}
