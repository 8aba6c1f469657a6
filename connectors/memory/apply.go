package memory

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/connectors/internal/rowfmt"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/types"
)

// change is a batch a sink received (copied), with its ops.
type change struct {
	rec arrow.RecordBatch
	ops []exec.RowKind // nil: all +I
}

func hasRetract(cs []change) bool {
	for _, c := range cs {
		for _, op := range c.ops {
			if op.IsRetract() {
				return true
			}
		}
	}
	return false
}

// apply commits cs to t atomically: on error nothing changes. applied names
// the staged file cs came from ("" if none). pk are the indexes of the
// table's primary key columns (none: rows are a multiset); with a key the
// changes upsert (applyKeyed). It takes ownership of cs.
func (t *table) apply(cs []change, schema types.Schema, applied string, pk []int) error {
	defer func() {
		for _, c := range cs {
			c.rec.Release()
		}
	}()
	t.mu.Lock()
	defer t.mu.Unlock()
	seq := t.man.Seq
	var eff []change // the changes a follower sees (log.go)
	var err error
	switch {
	case len(pk) > 0:
		eff, err = t.applyKeyed(cs, schema, applied, pk)
		defer func() {
			for _, c := range eff {
				c.rec.Release()
			}
		}()
	case !hasRetract(cs):
		eff, err = cs, t.appendAll(cs, applied)
	default:
		eff, err = cs, t.applyMultiset(cs, schema, applied)
	}
	if err == nil && t.man.Seq != seq {
		t.record(eff)
	}
	return err
}

// applyMultiset commits cs, which hold retractions, to a table without an
// upsert key. The caller holds t.mu.
func (t *table) applyMultiset(cs []change, schema types.Schema, applied string) error {

	// Retractions: match each against an earlier insert of this commit,
	// else against a committed row.
	type pos struct{ c, row int }
	live := map[string][]pos{} // inserts of cs not yet retracted, by row key
	dead := make([][]bool, len(cs))
	fromCommitted := map[string]int{}
	var firstMissing = map[string]pos{}
	var key []byte
	for ci, c := range cs {
		dead[ci] = make([]bool, c.rec.NumRows())
		for r := range dead[ci] {
			key = appendKey(key[:0], c.rec, r, nil)
			op := exec.Insert
			if c.ops != nil {
				op = c.ops[r]
			}
			if !op.IsRetract() {
				live[string(key)] = append(live[string(key)], pos{ci, r})
				continue
			}
			dead[ci][r] = true
			if ps := live[string(key)]; len(ps) > 0 {
				p := ps[len(ps)-1]
				dead[p.c][p.row] = true
				live[string(key)] = ps[:len(ps)-1]
				continue
			}
			if _, ok := firstMissing[string(key)]; !ok {
				firstMissing[string(key)] = pos{ci, r}
			}
			fromCommitted[string(key)]++
		}
	}
	keep := make([][]bool, len(t.batches))
	for bi, b := range t.batches {
		for r := range int(b.NumRows()) {
			if len(fromCommitted) == 0 {
				break
			}
			key = appendKey(key[:0], b, r, nil)
			if n := fromCommitted[string(key)]; n > 0 {
				if keep[bi] == nil {
					keep[bi] = make([]bool, b.NumRows())
					for i := range keep[bi] {
						keep[bi][i] = true
					}
				}
				keep[bi][r] = false
				if n == 1 {
					delete(fromCommitted, string(key))
				} else {
					fromCommitted[string(key)] = n - 1
				}
			}
		}
	}
	for k := range fromCommitted {
		p := firstMissing[k]
		b := exec.Batch{Rec: cs[p.c].rec, Ops: cs[p.c].ops}
		return fmt.Errorf("memory table %s: cannot apply %s: no equal row in the table",
			t.name, rowfmt.AppendRow(nil, schema, b, p.row))
	}
	return t.rebuild(cs, keep, dead, applied)
}

// applyKeyed commits cs to a table with a primary key (the columns key), as
// RisingWave's tables with a key do: +I and +U replace the row of their key
// if there is one (an upsert), -U and -D remove the row of their key
// (whatever its other values), which must exist. When the table is
// followed (t.logging) it returns the changes as a follower sees them: an
// insert of a new key +I, a replaced row -U then its new row +U, a removed
// key -D (or -U) with the row it held. The caller holds t.mu.
func (t *table) applyKeyed(cs []change, schema types.Schema, applied string, key []int) ([]change, error) {
	type pos struct {
		c, row    int
		committed bool // c is a batch of t.batches, else a change of cs
	}
	var k []byte
	committed := map[string]pos{}
	for bi, b := range t.batches {
		for r := range int(b.NumRows()) {
			k = appendKey(k[:0], b, r, key)
			committed[string(k)] = pos{bi, r, true}
		}
	}
	keep := make([][]bool, len(t.batches))
	removed := false // a committed row or a row of cs is removed
	removeCommitted := func(p pos) {
		if keep[p.c] == nil {
			keep[p.c] = make([]bool, t.batches[p.c].NumRows())
			for i := range keep[p.c] {
				keep[p.c][i] = true
			}
		}
		keep[p.c][p.row] = false
		removed = true
	}
	// The changes a follower sees, as rows of t.batches or cs and ops.
	var effRows []pos
	var effOps []exec.RowKind
	emit := func(p pos, op exec.RowKind) {
		if t.logging {
			effRows, effOps = append(effRows, p), append(effOps, op)
		}
	}
	added := map[string]pos{} // rows of cs that are the row of their key
	dead := make([][]bool, len(cs))
	for ci, c := range cs {
		dead[ci] = make([]bool, c.rec.NumRows())
		for r := range dead[ci] {
			k = appendKey(k[:0], c.rec, r, key)
			op := exec.Insert
			if c.ops != nil {
				op = c.ops[r]
			}
			if op.IsRetract() {
				dead[ci][r], removed = true, true
			}
			old, had := added[string(k)]
			if had {
				dead[old.c][old.row], removed = true, true
				delete(added, string(k))
			} else if old, had = committed[string(k)]; had {
				removeCommitted(old)
				delete(committed, string(k))
			} else if op.IsRetract() {
				b := exec.Batch{Rec: c.rec, Ops: c.ops}
				return nil, fmt.Errorf("memory table %s: cannot apply %s: no row with its key in the table",
					t.name, rowfmt.AppendRow(nil, schema, b, r))
			}
			switch {
			case op.IsRetract():
				emit(old, op)
			case had:
				emit(old, exec.UpdateBefore)
				emit(pos{ci, r, false}, exec.UpdateAfter)
			default:
				emit(pos{ci, r, false}, exec.Insert)
			}
			if !op.IsRetract() {
				added[string(k)] = pos{ci, r, false}
			}
		}
	}
	var eff []change
	if len(effRows) > 0 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, t.schema)
		for _, p := range effRows {
			var rec arrow.RecordBatch
			if p.committed {
				rec = t.batches[p.c]
			} else {
				rec = cs[p.c].rec
			}
			for c := range int(rec.NumCols()) {
				types.AppendValue(b.Field(c), types.ValueAt(rec.Column(c), p.row))
			}
		}
		eff = []change{{rec: b.NewRecordBatch(), ops: effOps}}
		b.Release()
	}
	if !removed {
		return eff, t.appendAll(cs, applied)
	}
	return eff, t.rebuild(cs, keep, dead, applied)
}

// appendAll commits cs, which hold no retraction, by appending their rows.
// The caller holds t.mu.
func (t *table) appendAll(cs []change, applied string) error {
	var added []arrow.RecordBatch
	for _, c := range cs {
		if c.rec.NumRows() > 0 {
			c.rec.Retain()
			added = append(added, c.rec)
		}
	}
	if len(added) == 0 && applied == "" {
		return nil
	}
	batches := make([]arrow.RecordBatch, 0, len(t.batches)+len(added))
	for _, b := range t.batches {
		b.Retain()
		batches = append(batches, b)
	}
	batches = append(batches, added...)
	return t.install(batches, added, false, applied)
}

// rebuild installs the committed rows whose keep flag is set (a nil flag
// slice keeps the whole batch) followed by the rows of cs not dead. The
// caller holds t.mu.
func (t *table) rebuild(cs []change, keep, dead [][]bool, applied string) error {
	var batches []arrow.RecordBatch
	for bi, b := range t.batches {
		if keep[bi] == nil {
			b.Retain()
			batches = append(batches, b)
		} else if nb := filter(t.schema, b, keep[bi]); nb != nil {
			batches = append(batches, nb)
		}
	}
	for ci, c := range cs {
		k := make([]bool, len(dead[ci]))
		for i, d := range dead[ci] {
			k[i] = !d
		}
		if nb := filter(t.schema, c.rec, k); nb != nil {
			batches = append(batches, nb)
		}
	}
	return t.install(batches, nil, true, applied)
}

// filter returns the rows of rec whose keep flag is set, or nil if none is.
func filter(schema *arrow.Schema, rec arrow.RecordBatch, keep []bool) arrow.RecordBatch {
	all, none := true, true
	for _, k := range keep {
		all = all && k
		none = none && !k
	}
	if none {
		return nil
	}
	if all {
		rec.Retain()
		return rec
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for r, k := range keep {
		if !k {
			continue
		}
		for c := range int(rec.NumCols()) {
			types.AppendValue(b.Field(c), types.ValueAt(rec.Column(c), r))
		}
	}
	return b.NewRecordBatch()
}

// appendKey appends an encoding of row r of rec to dst such that two rows
// encode equally exactly when the values of the columns cols (nil: all)
// are equal (NULL equal to NULL, as the retraction of a row with NULLs
// needs).
func appendKey(dst []byte, rec arrow.RecordBatch, r int, cols []int) []byte {
	n := int(rec.NumCols())
	if cols != nil {
		n = len(cols)
	}
	for i := range n {
		c := i
		if cols != nil {
			c = cols[i]
		}
		col := rec.Column(c)
		if col.IsNull(r) {
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, 1)
		switch a := col.(type) {
		case *array.Boolean:
			if a.Value(r) {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		case *array.Int8:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Value(r)))
		case *array.Int16:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Value(r)))
		case *array.Int32:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Value(r)))
		case *array.Int64:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Value(r)))
		case *array.Float32:
			dst = binary.LittleEndian.AppendUint64(dst, floatBits(float64(a.Value(r))))
		case *array.Float64:
			dst = binary.LittleEndian.AppendUint64(dst, floatBits(a.Value(r)))
		case *array.Decimal128:
			v := a.Value(r)
			dst = binary.LittleEndian.AppendUint64(dst, v.LowBits())
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v.HighBits()))
		case *array.String:
			s := a.Value(r)
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		case *array.Binary:
			s := a.Value(r)
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		case *array.Date32:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(a.Value(r)))
		case *array.Time32:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(a.Value(r)))
		case *array.Timestamp:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(a.Value(r)))
		default:
			dst = fmt.Appendf(dst, "%v\x00", types.ValueAt(col, r))
		}
	}
	return dst
}

// floatBits makes -0 equal 0 and every NaN equal, as SQL equality of rows does.
func floatBits(f float64) uint64 {
	if f == 0 {
		return 0
	}
	if math.IsNaN(f) {
		return math.Float64bits(math.NaN())
	}
	return math.Float64bits(f)
}
