package exec

import (
	"unsafe"

	"github.com/streamsql/streamsql/types"
)

// The sizes of cached state values outside their cache entries, for the
// state memory budget (state.Cache.SetSizer): what their slices, strings
// and accumulators hold. They are estimates, counted when a value enters
// its cache and when it is marked dirty, so they must be cheap: a walk of
// the value's slices, never of its bytes.

// accBytes is about the memory of one accumulator behind its interface
// value (the object of a COUNT, SUM, MIN or AVG; a DISTINCT's or an
// updating MIN/MAX's value set is counted by its own key space).
const accBytes = 48

// valuesBytes is about the memory of key values (types.Value, boxed).
func valuesBytes(vs []types.Value) int {
	n := cap(vs) * 16
	for _, v := range vs {
		switch v := v.(type) {
		case nil:
		case string:
			n += 16 + len(v)
		case []byte:
			n += 24 + cap(v)
		default:
			n += 16
		}
	}
	return n
}

// groupBytes is the memory of a group of the group aggregate outside its
// entry: its block of words and, unless its aggregates are flat, their
// slice and objects.
func (a *groupAggOp) groupBytes(g *aggGroup) int {
	if g.w == nil {
		return 0
	}
	n := allocBytes(8 * a.nw)
	if !a.flat {
		n += 24 + allocBytes(16*cap(*g.accs)) + len(*g.accs)*accBytes
	}
	return n
}

// allocBytes is the size class of an allocation of n bytes (up to 256
// bytes, the Go allocator's: 8, 16, 24, 32, then every 16).
func allocBytes(n int) int {
	switch {
	case n <= 8:
		return 8
	case n <= 32:
		return (n + 7) &^ 7
	case n <= 256:
		return (n + 15) &^ 15
	}
	return n
}

// windowGroupBytes is the memory of a group of the window aggregation
// outside its entry: its block of words and, unless its aggregates are
// flat, their slice and objects.
func (c windowCodec) windowGroupBytes(g *aggGroup) int {
	if g.w == nil {
		return 0
	}
	n := allocBytes(8 * c.nw)
	if !c.flat {
		n += 24 + allocBytes(16*cap(*g.accs)) + len(*g.accs)*accBytes
	}
	return n
}

// sessionGroupBytes is the memory of a group of a session aggregate
// outside its entry.
func sessionGroupBytes(g *group) int {
	return valuesBytes(g.key) + cap(g.accs)*(16+accBytes)
}

// sessionsBytes is the memory of a key's open sessions outside its entry.
func sessionsBytes(s *sessions) int {
	n := valuesBytes(s.key) + cap(s.list)*int(unsafe.Sizeof(session{}))
	for i := range s.list {
		n += sessionGroupBytes(&s.list[i].g)
	}
	return n
}

// rankPartBytes is the memory of a TopN partition's rows outside its
// entry.
func rankPartBytes(p *rankPart) int {
	n := cap(p.rows) * int(unsafe.Sizeof(rankRow{}))
	for i := range p.rows {
		n += cap(p.rows[i].sort) + cap(p.rows[i].row)
	}
	return n
}

// overPartBytes is the memory of an OVER partition's accumulators and rows
// outside its entry.
// overRowBytes is the memory of a row of an OVER partition besides its
// bytes.
const overRowBytes = int(unsafe.Sizeof(overRow{}))

func overPartBytes(p *overPart) int {
	n := cap(p.accs)*(16+accBytes) + (cap(p.rows)+cap(p.hist))*overRowBytes
	for i := range p.rows {
		n += len(p.rows[i].sort) + len(p.rows[i].row)
	}
	for i := range p.hist {
		n += len(p.hist[i].sort) + len(p.hist[i].row)
	}
	return n
}
