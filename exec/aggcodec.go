package exec

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/types"
)

// State encodings of the aggregate operators. Each entry starts with
// checkpoint.AppendStateHeader(stateVersion); the key values carry their
// type tags and every accumulator its tag (aggDef.tag), all checked on
// decoding: state of another layout is checkpoint.ErrIncompatibleState
// naming the operator and what differs, never decoded as zeros. The
// layout as a whole (aggLayout) is also recorded per key group and
// compared when a subtask opens on restored state.
//
// testdata/state_golden holds one encoded entry per codec, which must keep
// decoding: when TestStateGolden fails, bump stateVersion and keep reading
// the old version, rather than changing the golden bytes.

// groupCodec encodes a group of the group aggregate: its row count, the
// accumulators and (from version 2) when a row last reached the group.
// The key values are not in the value: they are the entry's key
// (aggGroup), which the store holds beside it.
//
// Versions 1 and 2 also held the key values and the results as last
// emitted (those of the accumulators: a group written has rows, and has
// emitted the results of its state), both read past on decoding; version
// 3 dropped them, which took a COUNT(*), SUM(v) group from 77 bytes to
// 11, so that four times as many groups fit in a block of the store.
type groupCodec struct {
	a     *groupAggOp
	owner string
}

// groupStateVersion is the version of groupCodec's encoding: 2 added the
// time of the last write (state TTL), 3 dropped the key values and the
// results. Version 1 and 2 entries still decode; version 1 entries count
// as written when first read (with a TTL, a restored group lives at
// least one TTL).
const groupStateVersion = 3

func (c groupCodec) EncodeKeyed(dst []byte, _ string, g *aggGroup) []byte {
	a := c.a
	w := a.words(g)
	dst = checkpoint.AppendStateHeader(dst, groupStateVersion)
	dst = binary.AppendVarint(dst, int64(w[0]))
	if a.flat {
		dst = a.fold.encodeFlat(dst, w)
	} else {
		dst = a.fold.encodeAccs(dst, *g.accs)
	}
	var ts int64
	if a.ttl > 0 {
		ts = int64(w[a.nw-1])
	}
	return binary.AppendVarint(dst, ts)
}

func (c groupCodec) DecodeKeyed(src []byte, _ string, g *aggGroup) error {
	a := c.a
	version, rest, err := checkpoint.ReadStateHeader(src, c.owner, 1, groupStateVersion)
	if err != nil {
		return err
	}
	d := decoder{src: rest, owner: c.owner}
	if version < 3 {
		d.skipKey(a.keyT)
	}
	w := a.initGroup(g)
	rows := d.varint()
	if d.err == nil && rows <= 0 {
		d.fail() // groups are written with rows
	}
	if version < 3 && !d.bool() && d.err == nil {
		d.fail() // after their results are emitted
	}
	w[0] = uint64(rows)
	if a.flat {
		a.fold.decodeFlat(&d, w)
	} else {
		*g.accs = a.fold.decodeAccs(&d, *g.accs)
	}
	if version < 3 {
		for range a.old {
			d.scalar(&a.old[0]) // the results emitted: those of the state
		}
	}
	var ts int64
	if version >= 2 {
		ts = d.varint()
	}
	if ts == 0 {
		ts = a.now
	}
	if a.ttl > 0 {
		w[a.nw-1] = uint64(ts)
	}
	d.end()
	return d.err
}

// windowCodec encodes a window group: row count and accumulators, the
// group's words and, unless its aggregates are flat, its accumulators
// (aggGroup, as the group aggregate keeps them). The key values are
// those of the entry's key (the window aggregation's state key: [window
// end][window start][key columns as colReader.encodeKey writes them]);
// version 1 held them in the value too.
type windowCodec struct {
	fold  *aggFold
	keyT  []types.T
	owner string
	// flat: every aggregate keeps its state in the group's words
	// (aggfn_flat.go); nw is the number of the words: the row count, then
	// the aggregates' when flat.
	flat bool
	nw   int
	// dec is the decoder of DecodeKeyed, made once (a decoder on the
	// stack escapes to the heap through the accumulators' methods): the
	// codec is used by one goroutine.
	dec *decoder
}

// newWindowCodec is the codec of fold's window groups keyed by keyT; it
// lays fold's aggregates out in words when they all have a flat kind.
func newWindowCodec(fold *aggFold, keyT []types.T, owner string) windowCodec {
	words, flat := fold.layoutFlat(1)
	return windowCodec{fold: fold, keyT: keyT, owner: owner, flat: flat, nw: 1 + words, dec: &decoder{}}
}

// windowKeyBytes is the length of the window bounds before a window
// group's key columns in its state key.
const windowKeyBytes = 16

// words are the words of g (nil for a group not made yet).
func (c windowCodec) words(g *aggGroup) []uint64 {
	if g.w == nil {
		return nil
	}
	return unsafe.Slice(g.w, c.nw)
}

// initGroup makes g a group without rows (reusing what it holds) and
// returns its words.
func (c windowCodec) initGroup(g *aggGroup) []uint64 {
	w := c.words(g)
	if w == nil {
		w = make([]uint64, c.nw)
		g.w = &w[0]
	} else {
		clear(w)
	}
	if !c.flat {
		if g.accs == nil {
			g.accs = new([]accumulator)
		}
		*g.accs = c.fold.newAccs(*g.accs)
	}
	return w
}

// windowStateVersion is the version of windowCodec's encoding: 2
// dropped the key values, which the entry's key holds. Version 1 entries
// still decode.
const windowStateVersion = 2

func (c windowCodec) EncodeKeyed(dst []byte, _ string, g *aggGroup) []byte {
	w := c.words(g)
	dst = checkpoint.AppendStateHeader(dst, windowStateVersion)
	dst = binary.AppendVarint(dst, int64(w[0]))
	if c.flat {
		return c.fold.encodeFlat(dst, w)
	}
	return c.fold.encodeAccs(dst, *g.accs)
}

// DecodeKeyed decodes into g, reusing its words and accumulators: a
// group decoded into the same g again allocates nothing.
func (c windowCodec) DecodeKeyed(src []byte, key string, g *aggGroup) error {
	if len(key) < windowKeyBytes {
		return fmt.Errorf("%w: %s: window key of %d bytes", errCorrupt, c.owner, len(key))
	}
	version, rest, err := checkpoint.ReadStateHeader(src, c.owner, 1, windowStateVersion)
	if err != nil {
		return err
	}
	d := c.dec
	*d = decoder{src: rest, owner: c.owner}
	if version < 2 {
		d.skipKey(c.keyT)
	}
	w := c.initGroup(g)
	w[0] = uint64(d.varint())
	if c.flat {
		c.fold.decodeFlat(d, w)
	} else {
		*g.accs = c.fold.decodeAccs(d, *g.accs)
	}
	d.end()
	err = d.err
	*d = decoder{} // keeps no reference to src
	return err
}

// sessionCodec encodes a key's open sessions: key values, then per
// session its bounds, row count and accumulators.
type sessionCodec struct {
	fold  *aggFold
	keyT  []types.T
	owner string
}

func (c sessionCodec) Encode(dst []byte, ss *sessions) []byte {
	dst = checkpoint.AppendStateHeader(dst, stateVersion)
	dst = appendKey(dst, ss.key)
	dst = binary.AppendUvarint(dst, uint64(len(ss.list)))
	for i := range ss.list {
		s := &ss.list[i]
		dst = binary.AppendVarint(dst, s.start)
		dst = binary.AppendVarint(dst, s.end)
		dst = binary.AppendVarint(dst, s.g.rows)
		dst = c.fold.encodeAccs(dst, s.g.accs)
	}
	return dst
}

func (c sessionCodec) Decode(src []byte, ss *sessions) error {
	d, err := newStateDecoder(src, c.owner)
	if err != nil {
		return err
	}
	ss.key = d.key(c.keyT)
	n := d.uvarint()
	if n > uint64(len(d.src)) {
		d.fail()
	}
	if d.err != nil {
		return d.err
	}
	ss.list = make([]session, n)
	for i := range ss.list {
		s := &ss.list[i]
		s.start = d.varint()
		s.end = d.varint()
		s.g.rows = d.varint()
		s.g.accs = c.fold.decodeAccs(&d, nil)
	}
	d.end()
	return d.err
}

func appendKey(dst []byte, key []types.Value) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	for _, v := range key {
		dst = appendValue(dst, v)
	}
	return dst
}

func appendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, 1)
	}
	return append(dst, 0)
}

func appendFloat(dst []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
}

func appendDecimal(dst []byte, d decimal128.Num) []byte {
	dst = binary.BigEndian.AppendUint64(dst, uint64(d.HighBits()))
	return binary.BigEndian.AppendUint64(dst, d.LowBits())
}

func appendBytes(dst, b []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(b))), b...)
}

func appendScalarState(dst []byte, s *scalar) []byte {
	if s.null {
		return append(dst, 0)
	}
	dst = binary.AppendVarint(append(dst, 1), s.i)
	dst = appendDecimal(appendFloat(dst, s.f), s.d)
	return appendBytes(dst, s.b)
}

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// decoder reads a state encoding; the first failure sticks in err.
type decoder struct {
	src   []byte
	err   error
	owner string
}

// newStateDecoder checks the header of src, an operator state encoding of
// owner's (checkpoint.ReadStateHeader, this build's stateVersion), and
// returns a decoder of what follows it.
func newStateDecoder(src []byte, owner string) (decoder, error) {
	_, rest, err := checkpoint.ReadStateHeader(src, owner, stateVersion, stateVersion)
	return decoder{src: rest, owner: owner}, err
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errCorrupt, d.owner)
	}
	d.src = nil
}

// incompatible records state that is well formed but not of the
// operator's layout.
func (d *decoder) incompatible(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s: %s", checkpoint.ErrIncompatibleState, d.owner, fmt.Sprintf(format, args...))
	}
	d.src = nil
}

// end checks that nothing is left.
func (d *decoder) end() {
	if d.err == nil && len(d.src) != 0 {
		d.incompatible("%d bytes left after the state of the query's layout", len(d.src))
	}
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

func (d *decoder) bool() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail()
	return false
}

func (d *decoder) fixed(n int) []byte {
	if len(d.src) < n {
		d.fail()
		return make([]byte, n)
	}
	b := d.src[:n]
	d.src = d.src[n:]
	return b
}

func (d *decoder) float() float64 { return math.Float64frombits(binary.BigEndian.Uint64(d.fixed(8))) }

func (d *decoder) decimal() decimal128.Num {
	b := d.fixed(16)
	return decimal128.New(int64(binary.BigEndian.Uint64(b)), binary.BigEndian.Uint64(b[8:]))
}

// bytes reads a length-prefixed byte string (a view into the source).
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.src)) {
		d.fail()
		return nil
	}
	return d.fixed(int(n))
}

func (d *decoder) scalar(s *scalar) {
	if !d.bool() {
		s.null = true
		return
	}
	s.null = false
	s.i = d.varint()
	s.f = d.float()
	s.d = d.decimal()
	s.b = append(s.b[:0], d.bytes()...)
}

// key reads key values, checking their number and types against keyT.
func (d *decoder) key(keyT []types.T) []types.Value {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n != uint64(len(keyT)) {
		d.incompatible("%d key columns in the state, %d in the query", n, len(keyT))
		return nil
	}
	key := make([]types.Value, n)
	for i := range key {
		if d.err != nil {
			return nil
		}
		v, rest, err := readValue(d.src)
		if err != nil {
			d.fail()
			return nil
		}
		d.src = rest
		if !valueOfType(v, keyT[i]) {
			d.incompatible("key column %d holds a %T, the query's is %s", i+1, v, keyT[i])
			return nil
		}
		key[i] = v
	}
	return key
}

// valueOfType reports whether v (NULL or a value as types.ValueAt makes
// them) is of type t.
func valueOfType(v types.Value, t types.T) bool {
	if v == nil {
		return true
	}
	switch v.(type) {
	case bool:
		return t.Kind == types.Boolean
	case int64:
		switch t.Kind {
		case types.TinyInt, types.SmallInt, types.Int, types.BigInt, types.Timestamp:
			return true
		}
	case int32:
		return t.Kind == types.Date || t.Kind == types.Time
	case float64:
		return t.Kind == types.Float || t.Kind == types.Double
	case decimal128.Num:
		return t.Kind == types.Decimal
	case string:
		return t.Kind == types.String
	case []byte:
		return t.Kind == types.Bytes
	}
	return false
}
