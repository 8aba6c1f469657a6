package exec

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// BenchmarkEventTimeCase evaluates the event time of the Nexmark table
// (bench/nexmark/ddl.sql),
//
//	CASE WHEN event_type = 0 THEN person.dateTime
//	     WHEN event_type = 1 THEN auction.dateTime
//	     ELSE bid.dateTime END
//
// over 500K events in batches of DefaultBatchSize, kinds in the 1:3:46
// mix, each ROW NULL for the events of the other kinds:
//
//	GOMAXPROCS=1 go test ./exec -run '^$' -bench EventTimeCase -benchtime 20x
func BenchmarkEventTimeCase(b *testing.B) {
	const rows = 500_000
	mem := memory.DefaultAllocator
	ts := types.T{Kind: types.Timestamp, Precision: 3}
	row := types.T{Kind: types.Row, Fields: []types.Column{{Name: "dateTime", Type: ts}}}
	kind := &planner.ColumnRef{Index: 0, Name: "event_type", T: types.IntType}
	field := func(col int, name string) planner.Expr {
		r, err := functions.ResolveField(row, 0)
		if err != nil {
			b.Fatal(err)
		}
		lit := &planner.Literal{Value: int64(0), T: types.T{Kind: types.BigInt, NotNull: true}}
		return &planner.Call{Func: functions.FieldAccess, Args: []planner.Expr{&planner.ColumnRef{Index: col, Name: name, T: row}, lit}, Resolved: r}
	}
	lit := func(v int64) planner.Expr {
		return &planner.Literal{Value: v, T: types.T{Kind: types.Int, NotNull: true}}
	}
	e := bindCall(b, "CASE",
		bindCall(b, "=", kind, lit(0)), field(1, "person"),
		bindCall(b, "=", kind, lit(1)), field(2, "auction"),
		field(3, "bid"))
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "event_type", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "person", Type: row.ArrowType(), Nullable: true},
		{Name: "auction", Type: row.ArrowType(), Nullable: true},
		{Name: "bid", Type: row.ArrowType(), Nullable: true},
	}, nil)
	var recs []arrow.RecordBatch
	for start := 0; start < rows; start += DefaultBatchSize {
		n := min(DefaultBatchSize, rows-start)
		kb := array.NewInt32Builder(mem)
		var sbs [3]*array.StructBuilder
		for k := range sbs {
			sbs[k] = array.NewStructBuilder(mem, row.ArrowType().(*arrow.StructType))
		}
		for i := range n {
			ev := start + i
			k := int32(2)
			switch ev % 50 {
			case 0:
				k = 0
			case 1, 2, 3:
				k = 1
			}
			kb.Append(k)
			for j, sb := range sbs {
				tb := sb.FieldBuilder(0).(*array.TimestampBuilder)
				if int32(j) == k {
					sb.Append(true)
					tb.Append(arrow.Timestamp(1_704_067_200_000_000 + int64(ev)*100))
				} else {
					sb.AppendNull() // and a NULL dateTime
				}
			}
		}
		cols := []arrow.Array{kb.NewArray(), sbs[0].NewArray(), sbs[1].NewArray(), sbs[2].NewArray()}
		recs = append(recs, array.NewRecordBatch(schema, cols, int64(n)))
		kb.Release()
		for k, c := range cols {
			c.Release()
			if k < 3 {
				sbs[k].Release()
			}
		}
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	ev := compileExpr(e)
	ctx := &functions.Context{Mem: mem}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, r := range recs {
			a, err := ev.evalArray(ctx, r)
			if err != nil {
				b.Fatal(err)
			}
			a.Release()
		}
	}
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
}
