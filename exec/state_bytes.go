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

// groupBytes is the memory of a group (group aggregation, window
// aggregation) outside its entry.
func groupBytes(g *group) int {
	return valuesBytes(g.key) + cap(g.accs)*(16+accBytes) + cap(g.prev)
}

// sessionsBytes is the memory of a key's open sessions outside its entry.
func sessionsBytes(s *sessions) int {
	n := valuesBytes(s.key) + cap(s.list)*int(unsafe.Sizeof(session{}))
	for i := range s.list {
		n += groupBytes(&s.list[i].g)
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
func overPartBytes(p *overPart) int {
	n := cap(p.accs)*(16+accBytes) + (cap(p.rows)+cap(p.hist))*int(unsafe.Sizeof(overRow{}))
	for i := range p.rows {
		n += len(p.rows[i].sort) + len(p.rows[i].row)
	}
	for i := range p.hist {
		n += len(p.hist[i].sort) + len(p.hist[i].row)
	}
	return n
}
