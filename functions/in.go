package functions

import (
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/streamsql/streamsql/types"
)

func init() {
	register("IN", resolveIn("IN", false))
	register("NOT IN", resolveIn("NOT IN", true))
}

// resolveIn resolves x IN (v1, v2, ...) passed as (x, v1, v2, ...). All are
// compared in their common type. As in SQL, the result is TRUE on a match,
// else NULL if x or some vi is NULL, else FALSE; NOT IN is its negation.
func resolveIn(name string, negate bool) func(args []types.T) (Resolved, error) {
	return func(args []types.T) (Resolved, error) {
		if err := nargs(name, args, 2, -1); err != nil {
			return Resolved{}, err
		}
		ct, ok := CommonType(args...)
		if !ok {
			ct = args[0]
			for _, a := range args[1:] {
				if ct, ok = comparisonType(ct, a); !ok {
					return Resolved{}, errArgs(name, args)
				}
			}
		}
		ct = ct.Nullable()
		rt := nullableFrom(types.BooleanType, args)
		k := &inKernel{t: ct, negate: negate}
		return Resolved{Ret: rt, ArgTypes: repeatT(ct, len(args)), Kernel: folding(types.BooleanType, k.eval)}, nil
	}
}

type inKernel struct {
	t      types.T
	negate bool
	set    atomic.Pointer[inSet]
}

// inSet is a hash set of a constant list, kept across batches.
type inSet struct {
	list    []types.Value
	ints    map[int64]struct{}
	strs    map[string]struct{}
	hasNull bool
}

func (k *inKernel) eval(ctx *Context, args []Vec, n int) (Vec, error) {
	mem := ctx.mem()
	probe, list := args[0], args[1:]
	if probe.IsNull() {
		return nullResult(ctx, types.BooleanType, args, n), nil
	}
	matchBuf, match := newBoolBuf(mem, n)
	// unknown: some list item is NULL in this row.
	unknownBuf, unknown := newBoolBuf(mem, n)
	defer unknownBuf.Release()
	if s := k.constSet(list); s != nil && !probe.Const {
		k.probeSet(s, probe, n, match)
		if s.hasNull {
			bitutil.SetBitsTo(unknown, 0, int64(n), true)
		}
	} else {
		tmpBuf, tmp := newBoolBuf(mem, n)
		for _, item := range list {
			if item.IsNull() {
				bitutil.SetBitsTo(unknown, 0, int64(n), true)
				continue
			}
			clear(tmp)
			compareBits(opEQ, k.t, probe, item, n, tmp)
			if item.Const || item.Array.NullN() == 0 {
				bitutil.BitmapOr(match, tmp, 0, 0, match, 0, int64(n))
				continue
			}
			for i := range n {
				if item.Array.IsNull(i) {
					bitutil.SetBit(unknown, i)
				} else if bitutil.BitIsSet(tmp, i) {
					bitutil.SetBit(match, i)
				}
			}
		}
		tmpBuf.Release()
	}
	// valid = probe valid && (match || !unknown)
	vbuf, vbits := newBoolBuf(mem, n)
	nulls := 0
	for i := range n {
		m := bitutil.BitIsSet(match, i)
		if isValid(probe, i) && (m || !bitutil.BitIsSet(unknown, i)) {
			bitutil.SetBit(vbits, i)
		} else {
			nulls++
		}
		if k.negate {
			bitutil.SetBitTo(match, i, !m)
		}
	}
	val := validity{buf: vbuf, nulls: nulls}
	if nulls == 0 {
		vbuf.Release()
		val = validity{}
	}
	return finish(types.BooleanType, n, val, matchBuf), nil
}

// constSet returns a hash set of list when it is all constants of a type
// with a set representation and long enough to be worth it.
func (k *inKernel) constSet(list []Vec) *inSet {
	if len(list) < 6 {
		return nil
	}
	for _, it := range list {
		if !it.Const {
			return nil
		}
	}
	if s := k.set.Load(); s != nil && sameValues(s.list, list) {
		return s
	}
	s := &inSet{}
	switch k.t.Kind {
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt, types.Date, types.Time,
		types.Timestamp, types.IntervalDayTime, types.IntervalYearMonth:
		s.ints = map[int64]struct{}{}
	case types.String:
		s.strs = map[string]struct{}{}
	default:
		return nil
	}
	for _, it := range list {
		s.list = append(s.list, it.Value)
		switch v := it.Value.(type) {
		case nil:
			s.hasNull = true
		case int64:
			s.ints[v] = struct{}{}
		case int32:
			s.ints[int64(v)] = struct{}{}
		case string:
			s.strs[v] = struct{}{}
		}
	}
	k.set.Store(s)
	return s
}

func sameValues(vals []types.Value, list []Vec) bool {
	if len(vals) != len(list) {
		return false
	}
	for i, v := range vals {
		if v != list[i].Value {
			return false
		}
	}
	return true
}

func (k *inKernel) probeSet(s *inSet, probe Vec, n int, match []byte) {
	if s.strs != nil {
		p := newStrArg(probe)
		for i := range n {
			if _, ok := s.strs[p.at(i)]; ok {
				match[i>>3] |= 1 << uint(i&7)
			}
		}
		return
	}
	switch k.t.Kind {
	case types.TinyInt:
		probeInts(values[int8](probe.Array), s.ints, match)
	case types.SmallInt:
		probeInts(values[int16](probe.Array), s.ints, match)
	case types.Int, types.Date, types.Time:
		probeInts(values[int32](probe.Array), s.ints, match)
	default:
		probeInts(values[int64](probe.Array), s.ints, match)
	}
}

func probeInts[T integer](x []T, set map[int64]struct{}, match []byte) {
	for i, v := range x {
		if _, ok := set[int64(v)]; ok {
			match[i>>3] |= 1 << uint(i&7)
		}
	}
}
