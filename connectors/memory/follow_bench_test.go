package memory_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/streamsql/streamsql/connectors/internal/conntest"
	memtable "github.com/streamsql/streamsql/connectors/memory"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkKeyedUpsert commits 1,000 upserts of existing keys to a table
// with a primary key and 10,000 rows (in memory, no data dir), with and
// without a follower: what following costs a commit (the changes it sees
// are built and logged) and what the follower costs to read them.
func BenchmarkKeyedUpsert(b *testing.B) {
	rows := func(n, base int) [][]types.Value {
		out := make([][]types.Value, n)
		for i := range out {
			out[i] = row(int64(i), fmt.Sprintf("v%d", base+i))
		}
		return out
	}
	for _, followed := range []bool{false, true} {
		b.Run(fmt.Sprintf("followed=%v", followed), func(b *testing.B) {
			sp := followSpec("", 1024, "id")
			sp.Table = fmt.Sprintf("bench_%v_%d", followed, b.N)
			commit(b, sp, nil, rows(10_000, 0)...)
			var src exec.Source
			if followed {
				var err error
				if src, err = conntest.Reopen(context.Background(), memtable.Name, sp, func(exec.Source) error { return nil }); err != nil {
					b.Fatal(err)
				}
				defer src.Close()
				read(b, src)
			}
			upserts := rows(1000, 1)
			b.ResetTimer()
			for range b.N {
				commit(b, sp, nil, upserts...)
				// Each upsert is a -U and a +U.
				for n := 0; followed && n < 2*len(upserts); {
					bt, err := src.Next(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					n += bt.Len()
					bt.Rec.Release()
				}
			}
			b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "upserts/s")
		})
	}
}
