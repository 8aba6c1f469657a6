package exec

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// filterTestColumns are columns of n rows of the types the run-by-run
// filter copies itself (and BOOLEAN, which goes through Arrow's), with
// NULLs, and sliced so that they start at an offset.
func filterTestColumns(rng *rand.Rand, mem memory.Allocator, n int) []arrow.Array {
	null := func() bool { return rng.IntN(7) == 0 }
	i64 := array.NewInt64Builder(mem)
	i32 := array.NewInt32Builder(mem)
	ts := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Millisecond})
	dec := array.NewDecimal128Builder(mem, &arrow.Decimal128Type{Precision: 20, Scale: 2})
	str := array.NewStringBuilder(mem)
	bl := array.NewBooleanBuilder(mem)
	for i := range n + 3 {
		if null() {
			i64.AppendNull()
			str.AppendNull()
		} else {
			i64.Append(int64(i) * 1000003)
			str.Append(fmt.Sprintf("s%d%s", i, "xyz"[:i%4]))
		}
		i32.Append(int32(i))
		ts.Append(arrow.Timestamp(1_700_000_000_000 + i))
		dec.Append(decimal128.FromI64(int64(i) - 50))
		if null() {
			bl.AppendNull()
		} else {
			bl.Append(i%3 == 0)
		}
	}
	var cols []arrow.Array
	for _, b := range []array.Builder{i64, i32, ts, dec, str, bl} {
		a := b.NewArray()
		cols = append(cols, array.NewSlice(a, 3, int64(n+3)))
		a.Release()
		b.Release()
	}
	return cols
}

// TestFilterColumnMatchesArrow: the run-by-run filter of the calc
// operator keeps what Arrow's filter keeps, for masks with NULLs, none
// kept, all kept and runs of every length.
func TestFilterColumnMatchesArrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	tc := &taskContext{ctx: context.Background(), mem: mem}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 40 {
		n := 1 + rng.IntN(300)
		cols := filterTestColumns(rng, mem, n)
		mb := array.NewBooleanBuilder(mem)
		keep := []float64{0, 1, 0.5, 0.9, 0.1}[round%5]
		for range n {
			if rng.IntN(11) == 0 {
				mb.AppendNull()
			} else {
				mb.Append(rng.Float64() < keep)
			}
		}
		mask := mb.NewBooleanArray()
		mb.Release()
		runs, kept := keptRuns(nil, mask)
		for _, c := range cols {
			got, err := filterColumn(tc, mem, c, mask, runs, kept)
			if err != nil {
				t.Fatal(err)
			}
			want, err := compute.FilterArray(context.Background(), c, mask, *compute.DefaultFilterOptions())
			if err != nil {
				t.Fatal(err)
			}
			if !array.Equal(got, want) {
				t.Fatalf("round %d, %s: filter gives\n%v\nArrow's\n%v", round, c.DataType(), got, want)
			}
			if got.Len() != kept {
				t.Fatalf("round %d, %s: %d rows, %d kept", round, c.DataType(), got.Len(), kept)
			}
			got.Release()
			want.Release()
			c.Release()
		}
		mask.Release()
	}
}

// BenchmarkCalcFilter: a WHERE that keeps 92% of 1024 rows (Nexmark's
// bids among its events) of five BIGINT, TIMESTAMP and STRING columns, by
// runs and by Arrow's filter.
//
//	GOMAXPROCS=1 go test ./exec -run '^$' -bench CalcFilter
func BenchmarkCalcFilter(b *testing.B) {
	const n = 1024
	mem := memory.DefaultAllocator
	rng := rand.New(rand.NewPCG(5, 6))
	cols := filterTestColumns(rng, mem, n)[:5]
	mb := array.NewBooleanBuilder(mem)
	for range n {
		mb.Append(rng.IntN(50) < 46)
	}
	mask := mb.NewBooleanArray()
	tc := &taskContext{ctx: context.Background(), mem: mem}
	b.Run("runs", func(b *testing.B) {
		b.ReportAllocs()
		var runs []keptRun
		for range b.N {
			var kept int
			runs, kept = keptRuns(runs[:0], mask)
			for _, c := range cols {
				a, err := filterColumn(tc, mem, c, mask, runs, kept)
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
		}
	})
	b.Run("arrow", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			for _, c := range cols {
				a, err := compute.FilterArray(context.Background(), c, mask, *compute.DefaultFilterOptions())
				if err != nil {
					b.Fatal(err)
				}
				a.Release()
			}
		}
	})
}
