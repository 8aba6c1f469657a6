package exec

import "encoding/binary"

// countAcc is COUNT(x) (non-NULL values) and COUNT(*) (rows).
type countAcc struct{ n int64 }

func (a *countAcc) add(_ *foldCtx, _ *aggValue, sign int64) error { a.n += sign; return nil }

func (a *countAcc) merge(_ *foldCtx, src accumulator) error {
	a.n += src.(*countAcc).n
	return nil
}

func (a *countAcc) result(dst *scalar) error {
	dst.null, dst.i = false, a.n
	return nil
}

func (a *countAcc) encode(dst []byte) []byte { return binary.AppendVarint(dst, a.n) }
func (a *countAcc) decode(d *decoder)        { a.n = d.varint() }
func (a *countAcc) reset()                   { a.n = 0 }
