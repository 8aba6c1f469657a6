package functions

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

const benchRows = 4096

func int64Column(mem memory.Allocator, n int, withNulls bool) Vec {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	b.Reserve(n)
	for i := range n {
		if withNulls && i%10 == 0 {
			b.AppendNull()
			continue
		}
		b.Append(int64(i*7) - 1000)
	}
	return ArrayVec(types.BigIntType, b.NewArray())
}

func stringColumn(mem memory.Allocator, n int) Vec {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for i := range n {
		b.Append(fmt.Sprintf("user-%d@example.com/path/%d", i, i%17))
	}
	return ArrayVec(types.StringType, b.NewArray())
}

func mustResolve(b *testing.B, name string, args ...Vec) Resolved {
	f, ok := Lookup(name)
	if !ok {
		b.Fatalf("no %s", name)
	}
	r, err := f.ResolveArgs(ArgsOf(args))
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func runKernel(b *testing.B, r Resolved, args ...Vec) {
	ctx := &Context{Mem: memory.DefaultAllocator}
	b.ReportAllocs()
	b.SetBytes(benchRows * 8)
	b.ResetTimer()
	for range b.N {
		res, err := r.Kernel(ctx, args, benchRows)
		if err != nil {
			b.Fatal(err)
		}
		res.Release()
	}
}

func BenchmarkAddInt64(b *testing.B) {
	x := int64Column(memory.DefaultAllocator, benchRows, true)
	y := int64Column(memory.DefaultAllocator, benchRows, false)
	defer x.Release()
	defer y.Release()
	b.Run("array+array", func(b *testing.B) { runKernel(b, mustResolve(b, "+", x, y), x, y) })
	c := ConstVec(types.BigIntType, int64(5))
	b.Run("array+const", func(b *testing.B) { runKernel(b, mustResolve(b, "+", x, c), x, c) })
}

func BenchmarkCompareInt64(b *testing.B) {
	x := int64Column(memory.DefaultAllocator, benchRows, true)
	y := int64Column(memory.DefaultAllocator, benchRows, false)
	defer x.Release()
	defer y.Release()
	b.Run("array<array", func(b *testing.B) { runKernel(b, mustResolve(b, "<", x, y), x, y) })
	c := ConstVec(types.BigIntType, int64(5000))
	b.Run("array=const", func(b *testing.B) { runKernel(b, mustResolve(b, "=", x, c), x, c) })
}

func BenchmarkLike(b *testing.B) {
	s := stringColumn(memory.DefaultAllocator, benchRows)
	defer s.Release()
	for _, p := range []string{"user-1%", "%example%", "%/path/_", "u%@%.com/%1"} {
		pat := ConstVec(types.StringType, p)
		b.Run(p, func(b *testing.B) { runKernel(b, mustResolve(b, "LIKE", s, pat), s, pat) })
	}
}

func BenchmarkUpper(b *testing.B) {
	s := stringColumn(memory.DefaultAllocator, benchRows)
	defer s.Release()
	runKernel(b, mustResolve(b, "UPPER", s), s)
}

func BenchmarkCastIntToString(b *testing.B) {
	x := int64Column(memory.DefaultAllocator, benchRows, true)
	defer x.Release()
	k, err := Cast(types.BigIntType, types.StringType)
	if err != nil {
		b.Fatal(err)
	}
	runKernel(b, Resolved{Kernel: k}, x)
}

func BenchmarkHashColumn(b *testing.B) {
	x := int64Column(memory.DefaultAllocator, benchRows, true)
	s := stringColumn(memory.DefaultAllocator, benchRows)
	defer x.Release()
	defer s.Release()
	out := make([]uint64, benchRows)
	b.ReportAllocs()
	for range b.N {
		clear(out)
		HashColumn(x, benchRows, out)
		HashColumn(s, benchRows, out)
	}
}

// TestKernelAllocs guards the hot path: allocations per batch are a small
// constant, not proportional to rows.
func TestKernelAllocs(t *testing.T) {
	mem := memory.DefaultAllocator
	x := int64Column(mem, benchRows, true)
	y := int64Column(mem, benchRows, false)
	s := stringColumn(mem, benchRows)
	defer x.Release()
	defer y.Release()
	defer s.Release()
	ctx := &Context{Mem: mem}
	check := func(name string, args ...Vec) {
		f, _ := Lookup(name)
		r, err := f.ResolveArgs(ArgsOf(args))
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(20, func() {
			res, err := r.Kernel(ctx, args, benchRows)
			if err != nil {
				t.Fatal(err)
			}
			res.Release()
		})
		if allocs > 30 {
			t.Errorf("%s: %.0f allocations per batch of %d rows", name, allocs, benchRows)
		}
	}
	check("+", x, y)
	check("<", x, ConstVec(types.BigIntType, int64(5)))
	check("LIKE", s, ConstVec(types.StringType, "%exa_ple%"))
	check("UPPER", s)
	check("SUBSTRING", s, ConstVec(types.BigIntType, int64(3)), ConstVec(types.BigIntType, int64(5)))
	check("AND", mustBool(t, ctx, x), mustBool(t, ctx, y))
}

func mustBool(t *testing.T, ctx *Context, v Vec) Vec {
	r, err := Call(ctx, ">", []Vec{v, ConstVec(types.BigIntType, int64(0))}, benchRows)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Release)
	return r
}

func timestampColumn(mem memory.Allocator, n int, withNulls bool) Vec {
	b := array.NewTimestampBuilder(mem, types.TimestampOf(3).ArrowType().(*arrow.TimestampType))
	defer b.Release()
	b.Reserve(n)
	for i := range n {
		if withNulls && i%10 == 0 {
			b.AppendNull()
			continue
		}
		b.Append(arrow.Timestamp(1_700_000_000_000_000 + int64(i)*1_000_123))
	}
	return ArrayVec(types.TimestampOf(3), b.NewArray())
}

// BenchmarkTimestampPlusInterval: ts - INTERVAL (a watermark expression),
// ts + INTERVAL MONTH, and TIMESTAMPADD, each range checked.
func BenchmarkTimestampPlusInterval(b *testing.B) {
	ts := timestampColumn(memory.DefaultAllocator, benchRows, true)
	defer ts.Release()
	dt := ConstVec(types.T{Kind: types.IntervalDayTime}, int64(5000))
	b.Run("ts-daytime", func(b *testing.B) { runKernel(b, mustResolve(b, "-", ts, dt), ts, dt) })
	ym := ConstVec(types.T{Kind: types.IntervalYearMonth}, int64(14))
	b.Run("ts+yearmonth", func(b *testing.B) { runKernel(b, mustResolve(b, "+", ts, ym), ts, ym) })
	unit, cnt := ConstVec(types.StringType, "HOUR"), ConstVec(types.BigIntType, int64(25))
	b.Run("timestampadd", func(b *testing.B) {
		runKernel(b, mustResolve(b, "TIMESTAMPADD", unit, cnt, ts), unit, cnt, ts)
	})
}

// BenchmarkStringKernels: kernels whose result is much shorter than their
// first argument (SPLIT_INDEX, REGEXP_EXTRACT: Nexmark q22, q21) and one
// as long (UPPER), over 4096 URL-like strings; the output buffer is sized
// from the previous batch's.
//
//	GOMAXPROCS=1 go test ./functions -run '^$' -bench StringKernels
func BenchmarkStringKernels(b *testing.B) {
	s := stringColumn(memory.DefaultAllocator, benchRows)
	defer s.Release()
	sep, k := ConstVec(types.StringType, "/"), ConstVec(types.IntType, int64(1))
	b.Run("split_index", func(b *testing.B) { runKernel(b, mustResolve(b, "SPLIT_INDEX", s, sep, k), s, sep, k) })
	re, g := ConstVec(types.StringType, `path/(\d+)`), ConstVec(types.IntType, int64(1))
	b.Run("regexp_extract", func(b *testing.B) { runKernel(b, mustResolve(b, "REGEXP_EXTRACT", s, re, g), s, re, g) })
	b.Run("upper", func(b *testing.B) { runKernel(b, mustResolve(b, "UPPER", s), s) })
}

func jsonColumn(mem memory.Allocator, n int) Vec {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for i := range n {
		b.Append(fmt.Sprintf(`{"id": %d, "user": {"name": "user-%d", "tags": ["a", "b", "c"], "score": %d.5}, "url": "https://example.com/p/%d", "ok": true}`, i, i, i%100, i%17))
	}
	return ArrayVec(types.StringType, b.NewArray())
}

// BenchmarkJSONValue: JSON_VALUE of a literal path over documents of
// about 120 bytes.
func BenchmarkJSONValue(b *testing.B) {
	mem := memory.DefaultAllocator
	docs := jsonColumn(mem, benchRows)
	defer docs.Release()
	path := ConstVec(types.StringType, "$.user.name")
	runKernel(b, mustResolve(b, "JSON_VALUE", docs, path), docs, path)
}
