package datagen

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/types"
)

// golden is 2^64/φ, splitmix64's increment.
const golden = 0x9e3779b97f4a7c15

// Salts separating the streams drawn from one field seed.
const (
	saltNull   = 0x5bd1e9955bd1e995
	saltLength = 0xc2b2ae3d27d4eb4f
)

// mix is splitmix64's finaliser: a bijective scramble of z.
func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// rows says which rows a batch holds: n rows with global indexes g0,
// g0+step, ...; now is the wall clock (local, microseconds) for temporal
// fields.
type rows struct {
	g0, step uint64
	n        int
	now      int64
}

// generator produces one column of a batch. It is called once per column
// per batch; the loops inside are specialised per type.
type generator struct {
	f  *fieldConfig
	dt arrow.DataType
	// scale is 10^t.Scale for DECIMAL sequences.
	scale decimal128.Num
}

func newGenerator(f *fieldConfig) *generator {
	g := &generator{f: f, dt: f.t.ArrowType()}
	if f.t.Kind == types.Decimal {
		g.scale = decimal128.FromI64(1)
		for i := 0; i < f.t.Scale; i++ {
			g.scale = g.scale.Mul(decimal128.FromI64(10))
		}
	}
	return g
}

func newBuf(mem memory.Allocator, n int) *memory.Buffer {
	b := memory.NewResizableBuffer(mem)
	b.Resize(n)
	return b
}

func makeArray(dt arrow.DataType, n, nulls int, bufs ...*memory.Buffer) arrow.Array {
	d := array.NewData(dt, n, bufs, nil, nulls, 0)
	a := array.MakeFromData(d)
	d.Release()
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	return a
}

// validity returns the validity bitmap of r for a field with a null rate,
// or nil when every value is valid.
func (g *generator) validity(mem memory.Allocator, r rows) (*memory.Buffer, int) {
	rate := g.f.nullRate
	if rate <= 0 {
		return nil, 0
	}
	b := newBuf(mem, int(bitutil.BytesForBits(int64(r.n))))
	bm := b.Bytes()
	clear(bm)
	if rate >= 1 {
		return b, r.n
	}
	thr := uint64(rate * (1 << 64))
	z, inc := (g.f.seed^saltNull)+r.g0*golden, r.step*golden
	nulls := 0
	for i := 0; i < r.n; i++ {
		if mix(z) >= thr {
			bitutil.SetBit(bm, i)
		} else {
			nulls++
		}
		z += inc
	}
	return b, nulls
}

// column generates the values of r.
func (g *generator) column(mem memory.Allocator, r rows) arrow.Array {
	f, n := g.f, r.n
	if f.t.Kind == types.Null {
		return array.NewNull(n)
	}
	valid, nulls := g.validity(mem, r)
	seq := f.kind == kindSequence
	switch f.t.Kind {
	case types.TinyInt:
		b := newBuf(mem, n)
		ints(arrow.Int8Traits.CastFromBytes(b.Bytes()), f, r, seq)
		return makeArray(g.dt, n, nulls, valid, b)
	case types.SmallInt:
		b := newBuf(mem, 2*n)
		ints(arrow.Int16Traits.CastFromBytes(b.Bytes()), f, r, seq)
		return makeArray(g.dt, n, nulls, valid, b)
	case types.Int:
		b := newBuf(mem, 4*n)
		ints(arrow.Int32Traits.CastFromBytes(b.Bytes()), f, r, seq)
		return makeArray(g.dt, n, nulls, valid, b)
	case types.BigInt:
		b := newBuf(mem, 8*n)
		ints(arrow.Int64Traits.CastFromBytes(b.Bytes()), f, r, seq)
		return makeArray(g.dt, n, nulls, valid, b)
	case types.Float:
		b := newBuf(mem, 4*n)
		floats(arrow.Float32Traits.CastFromBytes(b.Bytes()), f, r, seq)
		return makeArray(g.dt, n, nulls, valid, b)
	case types.Double:
		b := newBuf(mem, 8*n)
		floats(arrow.Float64Traits.CastFromBytes(b.Bytes()), f, r, seq)
		return makeArray(g.dt, n, nulls, valid, b)
	case types.Decimal:
		b := newBuf(mem, 16*n)
		g.decimals(arrow.Decimal128Traits.CastFromBytes(b.Bytes()), r, seq)
		return makeArray(g.dt, n, nulls, valid, b)
	case types.Boolean:
		b := newBuf(mem, int(bitutil.BytesForBits(int64(n))))
		bm := b.Bytes()
		clear(bm)
		z, inc := f.seed+r.g0*golden, r.step*golden
		for i := 0; i < n; i++ {
			if mix(z)&1 != 0 {
				bitutil.SetBit(bm, i)
			}
			z += inc
		}
		return makeArray(g.dt, n, nulls, valid, b)
	case types.String, types.Bytes:
		if seq {
			return g.seqStrings(mem, r, valid, nulls)
		}
		return g.randomStrings(mem, r, valid, nulls)
	case types.Date:
		b := newBuf(mem, 4*n)
		day := arrow.Date32(floorDiv(r.now, 86400e6))
		for i, d := 0, arrow.Date32Traits.CastFromBytes(b.Bytes()); i < n; i++ {
			d[i] = day
		}
		return makeArray(g.dt, n, nulls, valid, b)
	case types.Time:
		b := newBuf(mem, 4*n)
		ms := (r.now - floorDiv(r.now, 86400e6)*86400e6) / 1000
		ms = truncate(ms, 3, f.t.Precision)
		for i, d := 0, arrow.Time32Traits.CastFromBytes(b.Bytes()); i < n; i++ {
			d[i] = arrow.Time32(ms)
		}
		return makeArray(g.dt, n, nulls, valid, b)
	case types.Timestamp:
		b := newBuf(mem, 8*n)
		d := arrow.TimestampTraits.CastFromBytes(b.Bytes())
		past := uint64(f.maxPast.Microseconds())
		z, inc := f.seed+r.g0*golden, r.step*golden
		if seq {
			// Event time: start + g·step, minus a lag up to max-past.
			v, s := f.start+int64(r.g0)*f.step, int64(r.step)*f.step
			for i := range d {
				x := v
				if past > 0 {
					hi, _ := bits.Mul64(mix(z), past+1)
					x -= int64(hi)
					z += inc
				}
				d[i] = arrow.Timestamp(truncate(x, 6, f.t.Precision))
				v += s
			}
			return makeArray(g.dt, n, nulls, valid, b)
		}
		for i := range d {
			v := r.now
			if past > 0 {
				hi, _ := bits.Mul64(mix(z), past+1)
				v -= int64(hi)
				z += inc
			}
			d[i] = arrow.Timestamp(truncate(v, 6, f.t.Precision))
		}
		return makeArray(g.dt, n, nulls, valid, b)
	case types.IntervalDayTime, types.IntervalYearMonth:
		// Not generated by Flink; random values up to 30 days or 100 years.
		b := newBuf(mem, 8*n)
		span := uint64(30 * 86400000)
		if f.t.Kind == types.IntervalYearMonth {
			span = 1200
		}
		d := arrow.Int64Traits.CastFromBytes(b.Bytes())
		z, inc := f.seed+r.g0*golden, r.step*golden
		for i := range d {
			hi, _ := bits.Mul64(mix(z), span)
			d[i] = int64(hi)
			z += inc
		}
		return makeArray(g.dt, n, nulls, valid, b)
	}
	panic("datagen: no generator for " + f.t.String())
}

type integer interface {
	~int8 | ~int16 | ~int32 | ~int64
}

func ints[T integer](d []T, f *fieldConfig, r rows, seq bool) {
	if seq {
		v, s := f.start+int64(r.g0), int64(r.step)
		for i := range d {
			d[i] = T(v)
			v += s
		}
		return
	}
	z, inc := f.seed+r.g0*golden, r.step*golden
	lo, span := f.minI, uint64(f.maxI-f.minI)+1
	if span == 0 { // the whole int64 range
		for i := range d {
			d[i] = T(int64(mix(z)))
			z += inc
		}
		return
	}
	for i := range d {
		hi, _ := bits.Mul64(mix(z), span)
		d[i] = T(lo + int64(hi))
		z += inc
	}
}

func floats[T ~float32 | ~float64](d []T, f *fieldConfig, r rows, seq bool) {
	if seq {
		v, s := f.start+int64(r.g0), int64(r.step)
		for i := range d {
			d[i] = T(v)
			v += s
		}
		return
	}
	z, inc := f.seed+r.g0*golden, r.step*golden
	lo, hi := f.minF, f.maxF
	for i := range d {
		u := float64(mix(z)>>11) * 0x1p-53
		d[i] = T(lo*(1-u) + hi*u)
		z += inc
	}
}

func (g *generator) decimals(d []decimal128.Num, r rows, seq bool) {
	f := g.f
	if seq {
		v, s := f.start+int64(r.g0), int64(r.step)
		for i := range d {
			d[i] = decimal128.FromI64(v).Mul(g.scale)
			v += s
		}
		return
	}
	z, inc := f.seed+r.g0*golden, r.step*golden
	lo, span := f.minI, uint64(f.maxI-f.minI)+1
	for i := range d {
		x := mix(z)
		if span != 0 {
			hi, _ := bits.Mul64(x, span)
			x = uint64(lo) + hi
		}
		d[i] = decimal128.FromI64(int64(x))
		z += inc
	}
}

func (g *generator) seqStrings(mem memory.Allocator, r rows, valid *memory.Buffer, nulls int) arrow.Array {
	f := g.f
	ob := newBuf(mem, 4*(r.n+1))
	off := arrow.Int32Traits.CastFromBytes(ob.Bytes())
	data := make([]byte, 0, r.n*20)
	v, s := f.start+int64(r.g0), int64(r.step)
	for i := 0; i < r.n; i++ {
		off[i] = int32(len(data))
		data = strconv.AppendInt(data, v, 10)
		v += s
	}
	off[r.n] = int32(len(data))
	return makeArray(g.dt, r.n, nulls, valid, ob, memory.NewBufferBytes(data))
}

const hexDigits = "0123456789abcdef"

// hexPairs holds the two hex digits of each byte value.
var hexPairs = func() (t [256][2]byte) {
	for i := range t {
		t[i] = [2]byte{hexDigits[i&15], hexDigits[i>>4]}
	}
	return
}()

// randomStrings generates lowercase hex strings (STRING) or random bytes
// (BYTES) of the field's length, or of a random length up to it (var-len).
func (g *generator) randomStrings(mem memory.Allocator, r rows, valid *memory.Buffer, nulls int) arrow.Array {
	f := g.f
	ob := newBuf(mem, 4*(r.n+1))
	off := arrow.Int32Traits.CastFromBytes(ob.Bytes())
	z, inc := f.seed+r.g0*golden, r.step*golden
	total := 0
	if f.varLen {
		zl := (f.seed ^ saltLength) + r.g0*golden
		for i := 0; i < r.n; i++ {
			off[i] = int32(total)
			hi, _ := bits.Mul64(mix(zl), uint64(f.length)+1)
			total += int(hi)
			zl += inc
		}
	} else {
		for i := 0; i < r.n; i++ {
			off[i] = int32(total)
			total += f.length
		}
	}
	off[r.n] = int32(total)
	db := newBuf(mem, total)
	data := db.Bytes()
	hexa := f.t.Kind == types.String
	for i := 0; i < r.n; i++ {
		row := data[off[i]:off[i+1]]
		w := mix(z)
		if hexa {
			for len(row) >= 16 {
				x := mix(w)
				for j := 0; j < 16; j += 2 {
					p := &hexPairs[byte(x)]
					row[j], row[j+1] = p[0], p[1]
					x >>= 8
				}
				row = row[16:]
				w += golden
			}
			x := mix(w)
			for j := range row {
				row[j] = hexDigits[x&15]
				x >>= 4
			}
		} else {
			for len(row) >= 8 {
				binary.LittleEndian.PutUint64(row, mix(w))
				row = row[8:]
				w += golden
			}
			x := mix(w)
			for j := range row {
				row[j] = byte(x)
				x >>= 8
			}
		}
		z += inc
	}
	return makeArray(g.dt, r.n, nulls, valid, ob, db)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// truncate cuts v, a value with digits fractional-second digits, to
// precision digits.
func truncate(v int64, digits, precision int) int64 {
	if precision >= digits {
		return v
	}
	m := int64(math.Pow10(digits - precision))
	return floorDiv(v, m) * m
}
