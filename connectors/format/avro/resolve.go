package avro

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hamba/avro/v2"

	"github.com/streamsql/streamsql/types"
)

// ErrIncompatible is the error of a writer schema the table's columns
// cannot be read from (errors.Is).
var ErrIncompatible = errors.New("writer schema cannot be read into the table's columns")

var errNullNotNull = errors.New("NULL for a NOT NULL column")

// op is what a node reads from the wire and where it puts it.
type op uint8

const (
	opNull         op = iota // nothing; a NULL
	opBool                   // a byte -> i
	opInt                    // varint -> i
	opIntF                   // varint -> f
	opIntDiv1000             // varint (time-micros as long) -> i / 1000
	opIntMul1000             // varint (timestamp-millis) -> i * 1000
	opFloat                  // 4 bytes -> f
	opDouble                 // 8 bytes -> f
	opBytes                  // length, bytes -> bs
	opBytesDecimal           // length, big-endian bytes -> dec
	opFixed                  // size bytes -> bs
	opFixedDecimal           // size bytes -> dec
	opEnum                   // varint index -> bs (the symbol)
	opUnion                  // varint branch index, then kids[index]
	opRecord                 // kids in the writer's order
	opArray                  // blocks of kids[0] (skipped)
	opMap                    // blocks of string, kids[0] (skipped)
	opFail                   // a union branch the column cannot hold: err
)

// node is one step of a resolved program. tgt is nil for a value that is
// read and dropped.
type node struct {
	op      op
	tgt     *target
	size    int
	symbols [][]byte
	kids    []*node
	err     error
}

// resolve builds the program that reads records of writer w into the
// columns tgts (nil entries: columns not produced), whose types are cols.
func resolve(w avro.Schema, cols []types.Column, tgts []*target) (*node, error) {
	w = deref(w)
	rec, ok := w.(*avro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("%w: the writer schema is a %s, not a record", ErrIncompatible, w.Type())
	}
	return resolveRecord(rec, cols, tgts, nil, "")
}

func deref(s avro.Schema) avro.Schema {
	if r, ok := s.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return s
}

func resolveRecord(w *avro.RecordSchema, cols []types.Column, tgts []*target, row *target, path string) (*node, error) {
	n := &node{op: opRecord, tgt: row}
	for _, f := range w.Fields() {
		j := fieldIndex(cols, f)
		if j < 0 || tgts[j] == nil {
			n.kids = append(n.kids, skipNode(f.Type()))
			continue
		}
		k, err := resolveValue(f.Type(), tgts[j], path+cols[j].Name)
		if err != nil {
			return nil, err
		}
		n.kids = append(n.kids, k)
	}
	return n, nil
}

// fieldIndex finds the column writer field f fills: by name, exactly and
// then ignoring case, then by the field's aliases.
func fieldIndex(cols []types.Column, f *avro.Field) int {
	for j, c := range cols {
		if c.Name == f.Name() {
			return j
		}
	}
	for j, c := range cols {
		if strings.EqualFold(c.Name, f.Name()) {
			return j
		}
	}
	return -1
}

func logical(s avro.Schema) avro.LogicalSchema {
	if l, ok := s.(avro.LogicalTypeSchema); ok && l.Logical() != nil {
		return l.Logical()
	}
	return nil
}

// resolveValue resolves writer type w to column tg.
func resolveValue(w avro.Schema, tg *target, path string) (*node, error) {
	w = deref(w)
	if u, ok := w.(*avro.UnionSchema); ok {
		n := &node{op: opUnion, tgt: tg}
		for _, b := range u.Types() {
			k, err := resolveValue(b, tg, path)
			if err != nil {
				k = &node{op: opFail, err: err}
			}
			n.kids = append(n.kids, k)
		}
		return n, nil
	}
	t := tg.t
	lt := avro.LogicalType("")
	if l := logical(w); l != nil {
		lt = l.Type()
	}
	bad := func() (*node, error) {
		wt := string(w.Type())
		if lt != "" {
			wt += " (" + string(lt) + ")"
		}
		return nil, fmt.Errorf("%w: column '%s' of type %s cannot be read from the writer's %s", ErrIncompatible, path, t, wt)
	}
	nd := func(o op) (*node, error) { return &node{op: o, tgt: tg}, nil }
	switch w.Type() {
	case avro.Null:
		return nd(opNull)
	case avro.Boolean:
		if t.Kind == types.Boolean {
			return nd(opBool)
		}
	case avro.Int:
		switch {
		case t.Kind == types.Date && lt == avro.Date,
			t.Kind == types.Time && lt == avro.TimeMillis,
			lt == "" && (t.Kind == types.TinyInt || t.Kind == types.SmallInt || t.Kind == types.Int || t.Kind == types.BigInt):
			return nd(opInt)
		case lt == "" && (t.Kind == types.Float || t.Kind == types.Double):
			return nd(opIntF)
		}
	case avro.Long:
		switch {
		case t.Kind == types.BigInt && lt == "",
			t.Kind == types.Timestamp && (lt == avro.TimestampMicros || lt == avro.LocalTimestampMicros):
			return nd(opInt)
		case t.Kind == types.Timestamp && (lt == avro.TimestampMillis || lt == avro.LocalTimestampMillis):
			return nd(opIntMul1000)
		case t.Kind == types.Time && lt == avro.TimeMicros:
			return nd(opIntDiv1000)
		case lt == "" && (t.Kind == types.Float || t.Kind == types.Double):
			return nd(opIntF)
		}
	case avro.Float:
		if t.Kind == types.Float || t.Kind == types.Double {
			return nd(opFloat)
		}
	case avro.Double:
		if t.Kind == types.Double {
			return nd(opDouble)
		}
	case avro.String:
		if t.Kind == types.String || t.Kind == types.Bytes {
			return nd(opBytes)
		}
	case avro.Bytes:
		if d, ok := logical(w).(*avro.DecimalLogicalSchema); ok && t.Kind == types.Decimal {
			if err := decimalFits(d, t, path); err != nil {
				return nil, err
			}
			return nd(opBytesDecimal)
		}
		if lt == "" && (t.Kind == types.String || t.Kind == types.Bytes) {
			return nd(opBytes)
		}
	case avro.Fixed:
		size := w.(*avro.FixedSchema).Size()
		if d, ok := logical(w).(*avro.DecimalLogicalSchema); ok && t.Kind == types.Decimal {
			if err := decimalFits(d, t, path); err != nil {
				return nil, err
			}
			return &node{op: opFixedDecimal, tgt: tg, size: size}, nil
		}
		if t.Kind == types.Bytes {
			return &node{op: opFixed, tgt: tg, size: size}, nil
		}
	case avro.Enum:
		if t.Kind == types.String {
			n := &node{op: opEnum, tgt: tg}
			for _, s := range w.(*avro.EnumSchema).Symbols() {
				n.symbols = append(n.symbols, []byte(s))
			}
			return n, nil
		}
	case avro.Record:
		if t.Kind == types.Row {
			return resolveRecord(w.(*avro.RecordSchema), t.Fields, tg.kids, tg, path+".")
		}
	}
	return bad()
}

func decimalFits(d *avro.DecimalLogicalSchema, t types.T, path string) error {
	if d.Scale() != t.Scale || d.Precision() > t.Precision {
		return fmt.Errorf("%w: column '%s' of type %s cannot be read from the writer's decimal(%d, %d)", ErrIncompatible, path, t, d.Precision(), d.Scale())
	}
	return nil
}

// skipNode is the program that reads a value of w and drops it.
func skipNode(w avro.Schema) *node { return skipNodeAt(w, 0) }

// maxDepth bounds the nesting of a skipped value's type (a recursive
// writer type is refused, not followed forever).
const maxDepth = 64

func skipNodeAt(w avro.Schema, depth int) *node {
	w = deref(w)
	if depth > maxDepth {
		return &node{op: opFail, err: fmt.Errorf("%w: the writer's types nest deeper than %d", ErrIncompatible, maxDepth)}
	}
	switch w.Type() {
	case avro.Null:
		return &node{op: opNull}
	case avro.Boolean:
		return &node{op: opBool}
	case avro.Int, avro.Long, avro.Enum:
		return &node{op: opInt}
	case avro.Float:
		return &node{op: opFloat}
	case avro.Double:
		return &node{op: opDouble}
	case avro.String, avro.Bytes:
		return &node{op: opBytes}
	case avro.Fixed:
		return &node{op: opFixed, size: w.(*avro.FixedSchema).Size()}
	case avro.Union:
		n := &node{op: opUnion}
		for _, b := range w.(*avro.UnionSchema).Types() {
			n.kids = append(n.kids, skipNodeAt(b, depth+1))
		}
		return n
	case avro.Record:
		n := &node{op: opRecord}
		for _, f := range w.(*avro.RecordSchema).Fields() {
			n.kids = append(n.kids, skipNodeAt(f.Type(), depth+1))
		}
		return n
	case avro.Array:
		return &node{op: opArray, kids: []*node{skipNodeAt(w.(*avro.ArraySchema).Items(), depth+1)}}
	case avro.Map:
		return &node{op: opMap, kids: []*node{skipNodeAt(w.(*avro.MapSchema).Values(), depth+1)}}
	}
	return &node{op: opFail, err: fmt.Errorf("%w: unknown writer type %s", ErrIncompatible, w.Type())}
}
