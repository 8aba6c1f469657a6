package udf

import (
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/types"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStrLen: the user function str_len (examples/udf) against the
// built-in CHAR_LENGTH, each over 10M rows of strings of 5 to 40
// characters (a tenth of them not ASCII) in batches of 1,024 rows, as a
// source makes them; rows/cpu-s is rows per CPU second of the process
// (bench/UDF.md). The user function runs with its default time limit and
// with none.
func BenchmarkStrLen(b *testing.B) {
	const rows, batch = 10_000_000, 1024
	mem := memory.DefaultAllocator
	r := rand.New(rand.NewPCG(1, 2))
	var batches []functions.Vec
	for range 64 {
		sb := array.NewStringBuilder(mem)
		for range batch {
			n := 5 + r.IntN(36)
			s := strings.Repeat("x", n)
			if r.IntN(10) == 0 {
				s = "é" + s[2:]
			}
			sb.Append(s)
		}
		batches = append(batches, functions.ArrayVec(types.T{Kind: types.String}, sb.NewArray()))
		sb.Release()
	}
	defer func() {
		for _, v := range batches {
			v.Release()
		}
	}()
	run := func(b *testing.B, call func(v functions.Vec) (functions.Vec, error)) {
		b.ReportAllocs()
		cpu := cpuTime()
		for i := 0; i < b.N; i++ {
			for k := 0; k < rows/batch; k++ {
				out, err := call(batches[k%len(batches)])
				if err != nil {
					b.Fatal(err)
				}
				out.Release()
			}
		}
		b.ReportMetric(float64(b.N)*rows/(cpuTime()-cpu).Seconds(), "rows/cpu-s")
	}
	b.Run("builtin", func(b *testing.B) {
		f, _ := functions.Lookup("CHAR_LENGTH")
		res, err := f.Resolve([]types.T{{Kind: types.String}})
		if err != nil {
			b.Fatal(err)
		}
		ctx := &functions.Context{Mem: mem}
		args := make([]functions.Vec, 1)
		run(b, func(v functions.Vec) (functions.Vec, error) {
			args[0] = v
			return res.Kernel(ctx, args, batch)
		})
	})
	udf := func(timeout time.Duration) func(b *testing.B) {
		return func(b *testing.B) {
			m := loadOpts(b, "str_len", Options{MemoryLimit: MemoryLimitOption.Default(), CallTimeout: timeout})
			inst, err := m.Acquire()
			if err != nil {
				b.Fatal(err)
			}
			defer m.Release(inst)
			args := make([]functions.Vec, 1)
			run(b, func(v functions.Vec) (functions.Vec, error) {
				args[0] = v
				return inst.Call(mem, args, batch)
			})
		}
	}
	// With the default time limit, and with none ('call-timeout' = '0').
	b.Run("udf", udf(CallTimeoutOption.Default()))
	b.Run("udf-no-limit", udf(0))
}
