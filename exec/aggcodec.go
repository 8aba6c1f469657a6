package exec

import (
	"encoding/binary"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// groupCodec encodes a group's state for the state store: key values,
// counters, and each accumulator with its multiset, current then last
// emitted.
type groupCodec struct{ a *groupAggOp }

func (c groupCodec) Encode(dst []byte, g *group) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(g.key)))
	for _, v := range g.key {
		dst = appendValue(dst, v)
	}
	dst = binary.AppendVarint(dst, g.rows)
	dst = binary.AppendVarint(dst, g.prevRows)
	if g.emitted {
		dst = append(dst, 1)
	} else {
		dst = append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(g.accs)))
	for i := range g.accs {
		dst = encodeAcc(dst, &g.accs[i], true)
		dst = encodeAcc(dst, &g.prev[i], false)
	}
	return dst
}

func encodeAcc(dst []byte, a *acc, withSet bool) []byte {
	dst = binary.AppendVarint(dst, a.n)
	dst = binary.AppendVarint(dst, a.i)
	dst = appendValue(dst, a.f)
	dst = appendValue(dst, a.d)
	dst = appendValue(dst, a.s)
	if a.valid {
		dst = append(dst, 1)
	} else {
		dst = append(dst, 0)
	}
	if !withSet {
		return dst
	}
	dst = binary.AppendUvarint(dst, uint64(len(a.set)))
	for k, n := range a.set {
		dst = appendValue(dst, k)
		dst = binary.AppendVarint(dst, *n)
	}
	return dst
}

func (c groupCodec) Decode(src []byte, g *group) error {
	d := decoder{src: src}
	nk := d.uvarint()
	g.key = make([]any, nk)
	for i := range g.key {
		g.key[i] = d.value()
	}
	g.rows = d.varint()
	g.prevRows = d.varint()
	g.emitted = d.byte() == 1
	na := d.uvarint()
	g.accs = make([]acc, na)
	g.prev = make([]acc, na)
	for i := range g.accs {
		d.acc(&g.accs[i], true)
		d.acc(&g.prev[i], false)
	}
	return d.err
}

type decoder struct {
	src []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errCorrupt
	}
	d.src = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.src)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.src = d.src[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.src)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.src = d.src[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.src) == 0 {
		d.fail()
		return 0
	}
	b := d.src[0]
	d.src = d.src[1:]
	return b
}

func (d *decoder) value() any {
	if d.err != nil {
		return nil
	}
	v, rest, err := readValue(d.src)
	if err != nil {
		d.fail()
		return nil
	}
	d.src = rest
	return v
}

func (d *decoder) acc(a *acc, withSet bool) {
	a.n = d.varint()
	a.i = d.varint()
	a.f, _ = d.value().(float64)
	a.d, _ = d.value().(decimal128.Num)
	a.s, _ = d.value().(string)
	a.valid = d.byte() == 1
	if !withSet {
		return
	}
	n := d.uvarint()
	if n > 0 && d.err == nil {
		a.set = make(map[string]*int64, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			k, _ := d.value().(string)
			c := d.varint()
			a.set[k] = &c
		}
	}
}
