package avro

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// ErrMalformed is the error of a record that is not Avro of its writer
// schema (errors.Is).
var ErrMalformed = errors.New("malformed Avro record")

func malformed(p int, why string) error {
	return fmt.Errorf("%w: %s at byte %d", ErrMalformed, why, p)
}

// varint reads a zigzag-encoded long at p.
func varint(b []byte, p int) (int64, int, error) {
	var u uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if p >= len(b) {
			return 0, p, malformed(p, "the record ends inside a number")
		}
		c := b[p]
		p++
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), p, nil
		}
	}
	return 0, p, malformed(p, "a number longer than 10 bytes")
}

// length reads a non-negative length of a value that must fit in the rest
// of the record.
func length(b []byte, p int) (int, int, error) {
	n, q, err := varint(b, p)
	if err != nil {
		return 0, q, err
	}
	if n < 0 || n > int64(len(b)-q) {
		return 0, q, malformed(p, fmt.Sprintf("a length of %d where %d bytes are left", n, len(b)-q))
	}
	return int(n), q, nil
}

// bigEndianDecimal reads a two's-complement big-endian unscaled value.
func bigEndianDecimal(v []byte) (decimal128.Num, bool) {
	for len(v) > 16 { // redundant sign bytes only
		if v[0] != 0 && v[0] != 0xff || v[0] != v[1] {
			return decimal128.Num{}, false
		}
		v = v[1:]
	}
	if len(v) == 0 {
		return decimal128.Num{}, true
	}
	var buf [16]byte
	if v[0]&0x80 != 0 {
		for i := range buf {
			buf[i] = 0xff
		}
	}
	copy(buf[16-len(v):], v)
	return decimal128.New(int64(binary.BigEndian.Uint64(buf[:8])), binary.BigEndian.Uint64(buf[8:])), true
}

// read decodes the value of n at p into its target and returns the
// position after it.
func (n *node) read(b []byte, p int) (int, error) {
	tg := n.tgt
	switch n.op {
	case opNull:
		if tg != nil {
			tg.null = true
		}
		return p, nil
	case opBool:
		if p >= len(b) {
			return p, malformed(p, "the record ends inside a boolean")
		}
		if b[p] > 1 {
			return p, malformed(p, fmt.Sprintf("a boolean of %d", b[p]))
		}
		if tg != nil {
			tg.null, tg.i = false, int64(b[p])
		}
		return p + 1, nil
	case opInt, opIntF, opIntDiv1000, opIntMul1000:
		v, q, err := varint(b, p)
		if err != nil {
			return q, err
		}
		if tg != nil {
			tg.null = false
			switch n.op {
			case opInt:
				tg.i = v
			case opIntF:
				tg.f = float64(v)
			case opIntDiv1000:
				tg.i = v / 1000
			case opIntMul1000:
				if v > math.MaxInt64/1000 || v < math.MinInt64/1000 {
					return q, fmt.Errorf("column '%s': timestamp %d ms is out of range", tg.path, v)
				}
				tg.i = v * 1000
			}
		}
		return q, nil
	case opFloat:
		if len(b)-p < 4 {
			return p, malformed(p, "the record ends inside a float")
		}
		if tg != nil {
			tg.null, tg.f = false, float64(math.Float32frombits(binary.LittleEndian.Uint32(b[p:])))
		}
		return p + 4, nil
	case opDouble:
		if len(b)-p < 8 {
			return p, malformed(p, "the record ends inside a double")
		}
		if tg != nil {
			tg.null, tg.f = false, math.Float64frombits(binary.LittleEndian.Uint64(b[p:]))
		}
		return p + 8, nil
	case opBytes, opBytesDecimal:
		l, q, err := length(b, p)
		if err != nil {
			return q, err
		}
		return q + l, n.bytes(b[q:q+l], q)
	case opFixed, opFixedDecimal:
		if len(b)-p < n.size {
			return p, malformed(p, "the record ends inside a fixed")
		}
		return p + n.size, n.bytes(b[p:p+n.size], p)
	case opEnum:
		v, q, err := varint(b, p)
		if err != nil {
			return q, err
		}
		if v < 0 || v >= int64(len(n.symbols)) {
			return q, malformed(p, fmt.Sprintf("enum index %d of %d symbols", v, len(n.symbols)))
		}
		if tg != nil {
			tg.null, tg.bs = false, n.symbols[v]
		}
		return q, nil
	case opUnion:
		v, q, err := varint(b, p)
		if err != nil {
			return q, err
		}
		if v < 0 || v >= int64(len(n.kids)) {
			return q, malformed(p, fmt.Sprintf("union branch %d of %d", v, len(n.kids)))
		}
		return n.kids[v].read(b, q)
	case opRecord:
		if tg != nil {
			tg.null = false
		}
		var err error
		for _, k := range n.kids {
			if p, err = k.read(b, p); err != nil {
				return p, err
			}
		}
		return p, nil
	case opArray, opMap:
		for {
			cnt, q, err := varint(b, p)
			if err != nil {
				return q, err
			}
			p = q
			if cnt == 0 {
				return p, nil
			}
			if cnt < 0 { // a block with its size in bytes
				sz, q, err := length(b, p)
				if err != nil {
					return q, err
				}
				p = q + sz
				continue
			}
			if cnt > int64(len(b)-p) {
				return p, malformed(p, fmt.Sprintf("a block of %d items where %d bytes are left", cnt, len(b)-p))
			}
			for range cnt {
				if n.op == opMap {
					l, q, err := length(b, p)
					if err != nil {
						return q, err
					}
					p = q + l
				}
				if p, err = n.kids[0].read(b, p); err != nil {
					return p, err
				}
			}
		}
	case opFail:
		return p, n.err
	}
	return p, malformed(p, "unknown step")
}

func (n *node) bytes(v []byte, p int) error {
	tg := n.tgt
	if tg == nil {
		return nil
	}
	tg.null = false
	if n.op == opBytesDecimal || n.op == opFixedDecimal {
		d, ok := bigEndianDecimal(v)
		if !ok {
			return fmt.Errorf("column '%s': a decimal of %d bytes does not fit 128 bits", tg.path, len(v))
		}
		tg.dec = d
		return nil
	}
	tg.bs = v
	return nil
}
