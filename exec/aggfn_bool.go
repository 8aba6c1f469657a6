package exec

import "encoding/binary"

// boolAcc is BOOL_AND and BOOL_OR: the counts of TRUE and FALSE values,
// so that both are correct under retraction.
type boolAcc struct {
	and         bool
	trues, fals int64
}

func (a *boolAcc) add(_ *foldCtx, v *aggValue, sign int64) error {
	if v.i != 0 {
		a.trues += sign
	} else {
		a.fals += sign
	}
	return nil
}

func (a *boolAcc) merge(_ *foldCtx, src accumulator) error {
	o := src.(*boolAcc)
	a.trues += o.trues
	a.fals += o.fals
	return nil
}

func (a *boolAcc) result(dst *scalar) error {
	if a.trues+a.fals <= 0 {
		dst.null = true
		return nil
	}
	dst.null, dst.i = false, 0
	if (a.and && a.fals == 0) || (!a.and && a.trues > 0) {
		dst.i = 1
	}
	return nil
}

func (a *boolAcc) encode(dst []byte) []byte {
	return binary.AppendVarint(binary.AppendVarint(dst, a.trues), a.fals)
}
func (a *boolAcc) decode(d *decoder) { a.trues, a.fals = d.varint(), d.varint() }
func (a *boolAcc) reset()            { a.trues, a.fals = 0, 0 }
