package exec

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/state"
	"github.com/streamsql/streamsql/types"
)

// goldenFile holds one encoded state per codec of the aggregate operators.
//
// When TestStateGolden fails, an encoding changed: bump stateVersion (in
// aggfn.go; the group aggregate's entries have groupStateVersion of their
// own), keep reading the old version, and add the new encoding here
// under a new name; never edit the bytes of an existing line (they are what
// savepoints in the field hold). To add a line for a new codec, run the
// test with STREAMSQL_GOLDEN_ADD=1: it appends the lines it lacks.
const goldenFile = "testdata/state_golden.txt"

var goldenInput = types.Schema{
	{Name: "v", Type: types.BigIntType},
	{Name: "f", Type: types.DoubleType},
	{Name: "d", Type: types.DecimalOf(10, 2)},
	{Name: "s", Type: types.StringType},
	{Name: "b", Type: types.BooleanType},
}

func goldenAggs() []planner.AggCall {
	bigint := types.T{Kind: types.BigInt, NotNull: true}
	c := func(f planner.AggFunc, arg int, distinct bool, t types.T) planner.AggCall {
		argT := types.T{}
		if arg >= 0 {
			argT = goldenInput[arg].Type
		}
		return planner.AggCall{Func: f, Arg: arg, ArgT: argT, T: t, Distinct: distinct, Text: string(f)}
	}
	return []planner.AggCall{
		c(planner.AggCount, -1, false, bigint),
		c(planner.AggSum, 0, false, types.BigIntType),
		c(planner.AggAvg, 1, false, types.DoubleType),
		c(planner.AggSum, 2, false, types.DecimalOf(38, 2)),
		c(planner.AggMax, 3, false, types.StringType),
		c(planner.AggCount, 0, true, bigint),
		c(planner.AggVarSamp, 1, false, types.DoubleType),
		c(planner.AggBoolAnd, 4, false, types.BooleanType),
	}
}

// goldenAppendOnly are the aggregates only append-only inputs take.
func goldenAppendOnly() []planner.AggCall {
	aggs := goldenAggs()
	return append(aggs,
		planner.AggCall{Func: planner.AggFirstValue, Arg: 3, ArgT: types.StringType, T: types.StringType, Text: "FIRST_VALUE"},
		planner.AggCall{Func: planner.AggListAgg, Arg: 3, ArgT: types.StringType, T: types.StringType, Separator: ";", Text: "LISTAGG"},
		planner.AggCall{Func: planner.AggMin, Arg: 0, ArgT: types.BigIntType, T: types.BigIntType, Text: "MIN"},
	)
}

func goldenBatch(t *testing.T) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	vb, fb := array.NewInt64Builder(mem), array.NewFloat64Builder(mem)
	db := array.NewDecimal128Builder(mem, types.DecimalOf(10, 2).ArrowType().(*arrow.Decimal128Type))
	sb, bb := array.NewStringBuilder(mem), array.NewBooleanBuilder(mem)
	for i, s := range []string{"b", "a", "c"} {
		vb.Append(int64(i * 7))
		fb.Append(float64(i) + 0.5)
		db.Append(decimal128.FromI64(int64(100*i + 1)))
		sb.Append(s)
		bb.Append(i != 1)
	}
	cols := []arrow.Array{vb.NewArray(), fb.NewArray(), db.NewArray(), sb.NewArray(), bb.NewArray()}
	return array.NewRecordBatch(goldenInput.Arrow(), cols, 3)
}

// goldenFixedAggs are aggregates of fixed-width state over an append-only
// input, and goldenFixedKeyT the key types of their golden group.
func goldenFixedAggs() []planner.AggCall {
	bigint := types.T{Kind: types.BigInt, NotNull: true}
	c := func(f planner.AggFunc, arg int, t types.T) planner.AggCall {
		argT := types.T{}
		if arg >= 0 {
			argT = goldenInput[arg].Type
		}
		return planner.AggCall{Func: f, Arg: arg, ArgT: argT, T: t, Text: string(f)}
	}
	return []planner.AggCall{
		c(planner.AggCount, -1, bigint),
		c(planner.AggCount, 1, bigint),
		c(planner.AggSum, 0, types.BigIntType),
		c(planner.AggAvg, 0, types.BigIntType),
		c(planner.AggSum, 1, types.DoubleType),
		c(planner.AggAvg, 1, types.DoubleType),
		c(planner.AggMin, 0, types.BigIntType),
		c(planner.AggMax, 0, types.BigIntType),
	}
}

var goldenFixedKeyT = []types.T{types.BigIntType, types.DoubleType, types.StringType, types.IntType, types.DateType, types.BooleanType, types.BytesType}

// goldenKey is the key of the golden group of goldenAggs: 'k'.
const goldenKey = "\x01\x01k"

// goldenFixedKey is the key of the golden group of goldenFixedAggs, one
// row of columns of goldenFixedKeyT (the INT NULL), as the group
// aggregate's cache holds it.
func goldenFixedKey(t *testing.T) string {
	rec := goldenFixedKeyBatch()
	defer rec.Release()
	var key []byte
	for j, kt := range goldenFixedKeyT {
		var r colReader
		r.reset(kt, rec.Column(j))
		key = r.encodeKey(key, 0)
	}
	return string(key)
}

func goldenFixedKeyBatch() arrow.RecordBatch {
	mem := memory.DefaultAllocator
	var cols []arrow.Array
	var fields []arrow.Field
	for i, t := range goldenFixedKeyT {
		b := array.NewBuilder(mem, t.ArrowType())
		switch b := b.(type) {
		case *array.Int64Builder:
			b.Append(-7)
		case *array.Float64Builder:
			b.Append(2.5)
		case *array.StringBuilder:
			b.Append("k")
		case *array.Int32Builder:
			b.AppendNull()
		case *array.Date32Builder:
			b.Append(19000)
		case *array.BooleanBuilder:
			b.Append(true)
		case *array.BinaryBuilder:
			b.Append([]byte{0, 0xff})
		}
		cols = append(cols, b.NewArray())
		b.Release()
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("k%d", i), Type: t.ArrowType(), Nullable: true})
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, 1)
}

// goldenStates encodes one fixed state per codec.
func goldenStates(t *testing.T) map[string][]byte {
	rec := goldenBatch(t)
	defer rec.Release()
	out := map[string][]byte{}

	// Group aggregate, with a value set in the key space (DISTINCT).
	ga := &groupAggOp{spec: &planner.Aggregate{Aggs: goldenAggs()}, updating: true, keyT: []types.T{types.StringType}, ttl: 1}
	if err := ga.init(); err != nil {
		t.Fatal(err)
	}
	mem := state.NewMemory()
	x := foldCtx{sets: state.NewCountedSets(state.NewKeySpace(mem, spaceValues, "v"), countCodec{}),
		dsets: newDistinctSets(state.NewKeySpace(mem, spaceDistinct, "d"), "golden"), key: "k"}
	x.dsets.StartsEmpty()
	var g aggGroup
	w := ga.initGroup(&g)
	ga.fold.read(rec)
	for i := 0; i < 3; i++ {
		w[0]++
		if err := ga.fold.add(*g.accs, &x, i, 1); err != nil {
			t.Fatal(err)
		}
	}
	w[ga.nw-1] = 1_700_000_000_123 // last written (state TTL)
	out["group/v3"] = groupCodec{a: ga, owner: "golden"}.EncodeKeyed(nil, goldenKey, &g)
	out["group-fixed/v3"] = goldenFixedGroup(t, rec)

	// Window and session aggregates (inline DISTINCT sets).
	wf, err := newAggFold(goldenAppendOnly(), aggMode{})
	if err != nil {
		t.Fatal(err)
	}
	wf.read(rec)
	wg := group{key: []types.Value{"k"}, accs: wf.newAccs(nil)}
	var nx foldCtx
	for i := 0; i < 3; i++ {
		wg.rows++
		if err := wf.add(wg.accs, &nx, i, 1); err != nil {
			t.Fatal(err)
		}
	}
	keyT := []types.T{types.StringType}
	out["window/v2"] = goldenWindow(t, rec)
	out["window-fixed/v2"] = goldenFixedWindow(t, rec)
	ss := sessions{key: []types.Value{"k"}, list: []session{{start: 1, end: 2, g: wg}}}
	out["session/v1"] = sessionCodec{fold: wf, keyT: keyT, owner: "golden"}.Encode(nil, &ss)

	// An OVER aggregation's key: its accumulators, one retained row and
	// one pending.
	out["over/v1"] = overCodec{fold: wf, owner: "golden"}.Encode(nil, &overPart{accs: wg.accs, done: 1,
		rows: []overRow{{ts: 1_700_000_000_000_000, row: "\x01\x01a\x00"}, {ts: 1_700_000_001_000_000, sort: "\x01\x80", row: "\x00\x00"}}})

	n := int64(3)
	out["count/v1"] = countCodec{}.Encode(nil, &n)
	// A value of a DISTINCT set shared by four aggregates (q16's
	// COUNT(DISTINCT x) and three FILTERs of it).
	out["distinct/v1"] = appendDistinctCounts(nil, []int64{3, 0, 2, 1})

	// An interval join's row: its key's end (time, seq), then its value.
	ir := ivRow{t: 1_700_000_000_000_000, seq: 7, row: "\x01\x01k", matched: true}
	key := appendStoreKey(nil, &ivKey{key: "j"}, ir.t, ir.seq)
	out["interval-join/v1"] = appendIvRow(key[1:], &ir)

	// A run of a regular join's append-only side: two rows.
	run := appendJoinRunHeader(nil, 2)
	run = appendJoinRunRow(run, []byte("\x01\x01a"), 1, 1_700_000_000_000)
	out["join-run/v2"] = appendJoinRunRow(run, []byte("\x00"), 0, 5)

	// A TopN key's rows: order key and columns of two rows.
	out["rank/v1"] = rankCodec{}.Encode(nil, &rankPart{rows: []rankRow{{sort: []byte("\x01\x80\x00"), row: []byte("\x01\x01a\x00")}, {sort: []byte("\x02"), row: []byte("\x00\x00")}}})
	// A window TopN group's rows: the same two rows.
	out["window-rank/v1"] = windowRankCodec{}.Encode(nil, []rankRow{{sort: []byte("\x01\x80\x00"), row: []byte("\x01\x01a\x00")}, {sort: []byte("\x02"), row: []byte("\x00\x00")}})
	return out
}

// TestStateGolden: the state encodings of the aggregate operators are the
// ones in testdata/state_golden.txt, which keep decoding (see goldenFile).
func TestStateGolden(t *testing.T) {
	states := goldenStates(t)
	golden := map[string][]byte{}
	f, err := os.Open(goldenFile)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			name, hx, _ := strings.Cut(line, " ")
			b, err := hex.DecodeString(hx)
			if err != nil {
				t.Fatalf("%s: %s: %v", goldenFile, name, err)
			}
			golden[name] = b
		}
		f.Close()
	}
	var missing []string
	for name, enc := range states {
		want, ok := golden[name]
		if !ok {
			missing = append(missing, fmt.Sprintf("%s %x", name, enc))
			continue
		}
		if !bytes.Equal(enc, want) {
			t.Errorf("the %s encoding changed without a version bump:\n got  %x\n want %x\n"+
				"bump stateVersion, keep reading the old version, and add the new encoding under a new name", name, enc, want)
		}
	}
	// Every golden line decodes and encodes back to the same bytes.
	ga := &groupAggOp{spec: &planner.Aggregate{Aggs: goldenAggs()}, updating: true, keyT: []types.T{types.StringType}, ttl: 1}
	if err := ga.init(); err != nil {
		t.Fatal(err)
	}
	wf, _ := newAggFold(goldenAppendOnly(), aggMode{})
	keyT := []types.T{types.StringType}
	for name, b := range golden {
		var again []byte
		var err error
		switch name {
		case "group/v1", "group/v2", "group/v3":
			var g aggGroup
			c := groupCodec{a: ga, owner: "golden"}
			if err = c.DecodeKeyed(b, goldenKey, &g); err == nil {
				again = c.EncodeKeyed(nil, goldenKey, &g)
			}
		case "group-fixed/v2", "group-fixed/v3":
			fa := &groupAggOp{spec: &planner.Aggregate{Aggs: goldenFixedAggs()}, keyT: goldenFixedKeyT, ttl: 1}
			if err = fa.init(); err != nil {
				break
			}
			var g aggGroup
			c := groupCodec{a: fa, owner: "golden"}
			key := goldenFixedKey(t)
			if err = c.DecodeKeyed(b, key, &g); err == nil {
				again = c.EncodeKeyed(nil, key, &g)
			}
		case "window/v1", "window-fixed/v1", "window/v2", "window-fixed/v2":
			c, key := goldenWindowCodec(t, goldenAppendOnly(), keyT), goldenWindowKey(goldenKey)
			if strings.HasPrefix(name, "window-fixed/") {
				c, key = goldenWindowCodec(t, goldenFixedAggs(), goldenFixedKeyT), goldenWindowKey(goldenFixedKey(t))
			}
			var g aggGroup
			if err = c.DecodeKeyed(b, key, &g); err == nil {
				again = c.EncodeKeyed(nil, key, &g)
			}
		case "session/v1":
			var ss sessions
			c := sessionCodec{fold: wf, keyT: keyT, owner: "golden"}
			err = c.Decode(b, &ss)
			again = c.Encode(nil, &ss)
		case "interval-join/v1":
			st := newIvState(nil, "golden")
			var r ivRow
			if len(b) < 16 {
				err = fmt.Errorf("%d bytes", len(b))
				break
			}
			if r, err = st.decode(b[:16], b[16:]); err == nil {
				again = appendIvRow(append([]byte(nil), b[:16]...), &r)
			}
		case "join-run/v2":
			st := newJoinSideState(nil, planner.NoUniqueKey, true, false, "golden", true)
			k := st.newKey(0, nil)
			if err = st.decodeEntry(b, k); err == nil {
				again = appendJoinRunHeader(nil, len(k.rows))
				for i := range k.rows {
					r := &k.rows[i]
					again = appendJoinRunRow(again, k.cols(r), r.matches, r.ts)
				}
			}
		case "rank/v1":
			var p rankPart
			err = rankCodec{owner: "golden"}.Decode(b, &p)
			again = rankCodec{}.Encode(nil, &p)
		case "window-rank/v1":
			var rows []rankRow
			err = windowRankCodec{owner: "golden"}.Decode(b, &rows)
			again = windowRankCodec{}.Encode(nil, rows)
		case "over/v1":
			var p overPart
			c := overCodec{fold: wf, owner: "golden"}
			err = c.Decode(b, &p)
			again = c.Encode(nil, &p)
		case "distinct/v1":
			counts := make([]int64, 4)
			d, derr := newStateDecoder(b, "golden")
			if err = derr; err == nil {
				decodeDistinctCounts(&d, counts)
				err = d.err
			}
			again = appendDistinctCounts(nil, counts)
		case "count/v1":
			var n int64
			err = countCodec{}.Decode(b, &n)
			again = countCodec{}.Encode(nil, &n)
		default:
			t.Errorf("%s: golden line %s has no decoder in this test", goldenFile, name)
			continue
		}
		if err != nil {
			t.Errorf("golden %s no longer decodes: %v", name, err)
		} else if _, current := states[name]; current && !bytes.Equal(again, b) {
			// (A line of an older version decodes but encodes as the current one.)
			t.Errorf("golden %s decodes to another state: encoded again %x", name, again)
		}
	}
	if len(missing) > 0 {
		if os.Getenv("STREAMSQL_GOLDEN_ADD") == "" {
			t.Fatalf("%s lacks lines (run with STREAMSQL_GOLDEN_ADD=1 to add them):\n%s", goldenFile, strings.Join(missing, "\n"))
		}
		f, err := os.OpenFile(goldenFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if len(golden) == 0 {
			fmt.Fprintln(f, "# One encoded state per codec of the aggregate operators (exec/aggfn_golden_test.go).\n# Never edit a line: when an encoding changes, bump stateVersion and add a line.")
		}
		for _, m := range missing {
			fmt.Fprintln(f, m)
		}
		f.Close()
	}
}

// goldenFixedGroup encodes a group of goldenFixedAggs, keyed by
// goldenFixedKey, that folded the rows of rec.
func goldenFixedGroup(t *testing.T, rec arrow.RecordBatch) []byte {
	ga := &groupAggOp{spec: &planner.Aggregate{Aggs: goldenFixedAggs()}, keyT: goldenFixedKeyT, ttl: 1}
	if err := ga.init(); err != nil {
		t.Fatal(err)
	}
	if !ga.flat {
		t.Fatal("the fixed-width aggregates are not flat")
	}
	var g aggGroup
	w := ga.initGroup(&g)
	ga.fold.read(rec)
	var x foldCtx
	for i := 0; i < 3; i++ {
		w[0]++
		if err := ga.fold.addFlat(w, &x, i, 1); err != nil {
			t.Fatal(err)
		}
	}
	w[ga.nw-1] = 1_700_000_000_123
	return groupCodec{a: ga, owner: "golden"}.EncodeKeyed(nil, goldenFixedKey(t), &g)
}

// goldenWindowCodec is the codec of a window group of aggs keyed by
// keyT.
func goldenWindowCodec(t *testing.T, aggs []planner.AggCall, keyT []types.T) windowCodec {
	f, err := newAggFold(aggs, aggMode{})
	if err != nil {
		t.Fatal(err)
	}
	return newWindowCodec(f, keyT, "golden")
}

// goldenWindowKey is the state key of the group keyed key (as the group
// aggregate's cache holds it) in the window [1000, 2000).
func goldenWindowKey(key string) string {
	k := binary.BigEndian.AppendUint64(nil, 2000)
	return string(binary.BigEndian.AppendUint64(k, 1000)) + key
}

// goldenWindow encodes a window group of goldenAppendOnly, keyed 'k', that
// folded the rows of rec (its aggregates keep objects).
func goldenWindow(t *testing.T, rec arrow.RecordBatch) []byte {
	c := goldenWindowCodec(t, goldenAppendOnly(), []types.T{types.StringType})
	if c.flat {
		t.Fatal("the window aggregates of goldenAppendOnly are flat")
	}
	var g aggGroup
	w := c.initGroup(&g)
	c.fold.read(rec)
	var x foldCtx
	for i := 0; i < 3; i++ {
		w[0]++
		if err := c.fold.add(*g.accs, &x, i, 1); err != nil {
			t.Fatal(err)
		}
	}
	return c.EncodeKeyed(nil, goldenWindowKey(goldenKey), &g)
}

// goldenFixedWindow encodes a window group of goldenFixedAggs, keyed by
// the row of goldenFixedKeyBatch, that folded the rows of rec (in words).
func goldenFixedWindow(t *testing.T, rec arrow.RecordBatch) []byte {
	c := goldenWindowCodec(t, goldenFixedAggs(), goldenFixedKeyT)
	if !c.flat {
		t.Fatal("the fixed-width window aggregates are not flat")
	}
	var g aggGroup
	w := c.initGroup(&g)
	c.fold.read(rec)
	var x foldCtx
	for i := 0; i < 3; i++ {
		w[0]++
		if err := c.fold.addFlat(w, &x, i, 1); err != nil {
			t.Fatal(err)
		}
	}
	return c.EncodeKeyed(nil, goldenWindowKey(goldenFixedKey(t)), &g)
}

// TestWindowDecodeReuses: a window group of fixed-width aggregates read
// from the store into a group decoded before (as a window fired from the
// store reads each of its groups) allocates nothing, and reads what was
// written.
func TestWindowDecodeReuses(t *testing.T) {
	rec := goldenBatch(t)
	defer rec.Release()
	enc := goldenFixedWindow(t, rec)
	c := goldenWindowCodec(t, goldenFixedAggs(), goldenFixedKeyT)
	key := goldenWindowKey(goldenFixedKey(t))
	var g aggGroup
	if err := c.DecodeKeyed(enc, key, &g); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := c.DecodeKeyed(enc, key, &g); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("decoding a window group into a decoded one allocates %.0f times", allocs)
	}
	if again := c.EncodeKeyed(nil, key, &g); !bytes.Equal(again, enc) {
		t.Errorf("decoded and encoded again: %x, want %x", again, enc)
	}
	if rows := c.words(&g)[0]; rows != 3 {
		t.Errorf("decoded %d rows, want 3", rows)
	}
}
