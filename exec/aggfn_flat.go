package exec

import (
	"encoding/binary"
	"math"

	"github.com/streamsql/streamsql/planner"
)

// Fixed-width accumulators in words. The group aggregate and the window
// aggregation keep the state of aggregates of a fixed width (COUNT; SUM
// and AVG over integers and floats; MIN and MAX over integers of an
// append-only input; the statistics; BOOL_AND and BOOL_OR) in one block
// of words per group rather than an object per aggregate (aggGroup): a
// cached group is then a few dozen bytes, not a few hundred. Each such aggregate has a flat
// kind and the offset of its words in the block; the functions below run
// it over its words through its accumulator type's own methods (a value
// on the stack, loaded from the words and stored back), so that both
// layouts compute, and encode, alike. A query takes the words when every
// one of its aggregates has a flat kind; otherwise every aggregate keeps
// its object (the session aggregates always do).

// flatKind is how an aggregate's state lies in words (0: it does not).
type flatKind byte

const (
	flatNone     flatKind = iota
	flatCount             // n
	flatSumInt            // n, s (sumIntAcc)
	flatSumFloat          // n, s as float bits (sumFloatAcc)
	flatMinMax            // valid, cur (minMaxIntAcc)
	flatVar               // n, mean, m2 as float bits (varAcc)
	flatBool              // trues, falses (boolAcc)
	// flatRows is COUNT(*) without FILTER: the group's row count (word
	// 0), which it always equals, so it takes no word of its own.
	flatRows
)

// flatWords is the number of words of each kind.
var flatWords = [...]int{flatCount: 1, flatSumInt: 2, flatSumFloat: 2, flatMinMax: 2, flatVar: 3, flatBool: 2, flatRows: 0}

// flatKindOf is the flat kind of an accumulator tag (aggDef.tag) in the
// group aggregate or the window aggregation; DISTINCT aggregates (tag
// 'X'), retractable MIN/MAX, MIN/MAX over other classes, DECIMAL sums and
// the value functions keep their accumulator objects.
func flatKindOf(tag byte) flatKind {
	switch tag {
	case 'C':
		return flatCount
	case 'I':
		return flatSumInt
	case 'F':
		return flatSumFloat
	case 'N':
		return flatMinMax
	case 'V':
		return flatVar
	case 'B':
		return flatBool
	}
	return flatNone
}

func (a *sumIntAcc) load(w []uint64)  { a.n, a.s = int64(w[0]), int64(w[1]) }
func (a *sumIntAcc) store(w []uint64) { w[0], w[1] = uint64(a.n), uint64(a.s) }

func (a *sumFloatAcc) load(w []uint64)  { a.n, a.s = int64(w[0]), math.Float64frombits(w[1]) }
func (a *sumFloatAcc) store(w []uint64) { w[0], w[1] = uint64(a.n), math.Float64bits(a.s) }

func (a *minMaxIntAcc) load(w []uint64) { a.valid, a.cur = w[0] != 0, int64(w[1]) }
func (a *minMaxIntAcc) store(w []uint64) {
	w[0], w[1] = 0, uint64(a.cur)
	if a.valid {
		w[0] = 1
	}
}

func (a *varAcc) load(w []uint64) {
	a.n, a.mean, a.m2 = int64(w[0]), math.Float64frombits(w[1]), math.Float64frombits(w[2])
}
func (a *varAcc) store(w []uint64) {
	w[0], w[1], w[2] = uint64(a.n), math.Float64bits(a.mean), math.Float64bits(a.m2)
}

func (a *boolAcc) load(w []uint64)  { a.trues, a.fals = int64(w[0]), int64(w[1]) }
func (a *boolAcc) store(w []uint64) { w[0], w[1] = uint64(a.trues), uint64(a.fals) }

// flatAdd folds v with sign into d's words w (w[d.off:]).
func (d *aggDef) flatAdd(w []uint64, x *foldCtx, v *aggValue, sign int64) error {
	w = w[d.off:]
	switch d.flat {
	case flatCount:
		w[0] += uint64(sign)
	case flatSumInt:
		s, ok := addInt(int64(w[1]), v.i, sign)
		if !ok {
			return accOverflow(d.call)
		}
		w[0], w[1] = w[0]+uint64(sign), uint64(s)
	case flatSumFloat:
		w[1] = math.Float64bits(math.Float64frombits(w[1]) + v.f*float64(sign))
		w[0] += uint64(sign)
	case flatMinMax:
		a := minMaxIntAcc{isMax: d.isMax}
		a.load(w)
		if err := a.add(x, v, sign); err != nil {
			return err
		}
		a.store(w)
	case flatVar:
		a := varAcc{fn: d.call.Func}
		a.load(w)
		if err := a.add(x, v, sign); err != nil {
			return err
		}
		a.store(w)
	case flatBool:
		a := boolAcc{}
		a.load(w)
		if err := a.add(x, v, sign); err != nil {
			return err
		}
		a.store(w)
	}
	return nil
}

// flatResult writes the result of d's words into dst.
func (d *aggDef) flatResult(w []uint64, dst *scalar) error {
	w = w[d.off:]
	switch d.flat {
	case flatCount, flatRows:
		a := countAcc{n: int64(w[0])}
		return a.result(dst)
	case flatSumInt:
		a := sumIntAcc{c: d.call, avg: d.avg}
		a.load(w)
		return a.result(dst)
	case flatSumFloat:
		a := sumFloatAcc{avg: d.avg}
		a.load(w)
		return a.result(dst)
	case flatMinMax:
		a := minMaxIntAcc{}
		a.load(w)
		return a.result(dst)
	case flatVar:
		a := varAcc{fn: d.call.Func}
		a.load(w)
		return a.result(dst)
	case flatBool:
		a := boolAcc{and: d.and}
		a.load(w)
		return a.result(dst)
	}
	panic("exec: flatResult of an aggregate without words")
}

// flatEncode appends d's state as its accumulator encodes it.
func (d *aggDef) flatEncode(dst []byte, w []uint64) []byte {
	w = w[d.off:]
	switch d.flat {
	case flatCount, flatRows:
		a := countAcc{n: int64(w[0])}
		return a.encode(dst)
	case flatSumInt:
		a := sumIntAcc{}
		a.load(w)
		return a.encode(dst)
	case flatSumFloat:
		a := sumFloatAcc{}
		a.load(w)
		return a.encode(dst)
	case flatMinMax:
		a := minMaxIntAcc{}
		a.load(w)
		return a.encode(dst)
	case flatVar:
		a := varAcc{}
		a.load(w)
		return a.encode(dst)
	case flatBool:
		a := boolAcc{}
		a.load(w)
		return a.encode(dst)
	}
	panic("exec: flatEncode of an aggregate without words")
}

// flatDecode reads what flatEncode wrote into d's words.
func (d *aggDef) flatDecode(dec *decoder, w []uint64) {
	w = w[d.off:]
	switch d.flat {
	case flatCount:
		a := countAcc{}
		a.decode(dec)
		w[0] = uint64(a.n)
	case flatRows:
		a := countAcc{}
		if a.decode(dec); dec.err == nil && a.n != int64(w[0]) {
			dec.fail() // COUNT(*) differs from the row count read before
		}
	case flatSumInt:
		a := sumIntAcc{}
		a.decode(dec)
		a.store(w)
	case flatSumFloat:
		a := sumFloatAcc{}
		a.decode(dec)
		a.store(w)
	case flatMinMax:
		a := minMaxIntAcc{}
		a.decode(dec)
		a.store(w)
	case flatVar:
		a := varAcc{}
		a.decode(dec)
		a.store(w)
	case flatBool:
		a := boolAcc{}
		a.decode(dec)
		a.store(w)
	default:
		panic("exec: flatDecode of an aggregate without words")
	}
}

// layoutFlat gives every aggregate of f its offset in a block of words
// from off on, and returns the words they take; ok is false (and nothing
// changes) unless every aggregate has a flat kind. The word before off
// holds the group's row count, which a COUNT(*) without FILTER reads.
func (f *aggFold) layoutFlat(off int) (words int, ok bool) {
	for j := range f.defs {
		if flatKindOf(f.defs[j].tag) == flatNone {
			return 0, false
		}
	}
	for j := range f.defs {
		d := &f.defs[j]
		d.flat, d.off = flatKindOf(d.tag), off+words
		if d.flat == flatCount && d.call.Arg < 0 && !d.call.HasFilter {
			d.flat, d.off = flatRows, off-1
		}
		d.avg = d.call.Func == planner.AggAvg
		d.isMax = d.call.Func == planner.AggMax
		d.and = d.call.Func == planner.AggBoolAnd
		words += flatWords[d.flat]
	}
	return words, true
}

// addFlat folds row i into the words w of a group whose aggregates are
// all flat (layoutFlat), with sign; the caller has added sign to the
// row count (w[0]).
func (f *aggFold) addFlat(w []uint64, x *foldCtx, i int, sign int64) error {
	for j := range f.defs {
		d := &f.defs[j]
		if d.flat == flatRows {
			continue // the caller counts the row
		}
		v, ok := f.input(j, i)
		if !ok {
			continue
		}
		if d.flat == flatCount {
			w[d.off] += uint64(sign)
			continue
		}
		if err := d.flatAdd(w, x, v, sign); err != nil {
			return err
		}
	}
	return nil
}

// encodeFlat appends the words w of flat aggregates as encodeAccs appends
// their accumulators.
func (f *aggFold) encodeFlat(dst []byte, w []uint64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(f.defs)))
	for j := range f.defs {
		d := &f.defs[j]
		dst = d.flatEncode(append(dst, d.tag), w)
	}
	return dst
}

// decodeFlat reads what encodeFlat (or encodeAccs) wrote into the words
// w, checking that the aggregates are f's.
func (f *aggFold) decodeFlat(d *decoder, w []uint64) {
	if !f.checkCount(d) {
		return
	}
	for j := range f.defs {
		if !f.checkTag(d, j) {
			return
		}
		f.defs[j].flatDecode(d, w)
	}
}

// flatMergeable reports whether d's words merge exactly (flatMerge): the
// counts, integer sums and averages, MIN/MAX and BOOL_AND/OR. Float sums
// and the statistics merge too, but in another order of additions than
// folding the rows one by one, which rounds differently: a window
// aggregation that would merge them keeps its windows whole.
func (d *aggDef) flatMergeable() bool {
	switch d.flat {
	case flatCount, flatRows, flatSumInt, flatMinMax, flatBool:
		return true
	}
	return false
}

// flatMerge folds the words src of another group into dst (both whole
// groups: the row count first), as if dst had also folded src's rows;
// every aggregate must be flatMergeable.
func (f *aggFold) flatMerge(dst, src []uint64) error {
	dst[0] += src[0]
	for j := range f.defs {
		d := &f.defs[j]
		w, v := dst[d.off:], src[d.off:]
		switch d.flat {
		case flatRows:
		case flatCount:
			w[0] += v[0]
		case flatSumInt:
			s, ok := addInt(int64(w[1]), int64(v[1]), 1)
			if !ok {
				return accOverflow(d.call)
			}
			w[0], w[1] = w[0]+v[0], uint64(s)
		case flatMinMax:
			if v[0] != 0 {
				a := minMaxIntAcc{isMax: d.isMax}
				a.load(w)
				a.offer(int64(v[1]))
				a.store(w)
			}
		case flatBool:
			w[0], w[1] = w[0]+v[0], w[1]+v[1]
		default:
			panic("exec: flatMerge of an aggregate that does not merge")
		}
	}
	return nil
}
