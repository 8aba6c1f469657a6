package planner

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/types"
)

// An operator's id says what the operator computes, so that the state of a
// savepoint finds its operator again in a re-planned (or changed) query
// (docs/DESIGN.md, "Operator identity"). It is a hash of:
//   - the operator's kind;
//   - what its Spec writes in Identity: key columns, aggregate calls,
//     window parameters, the table read or written (its name, never its
//     options), expressions in a canonical encoding (column indexes and
//     types, literal values, function names; never column names or the
//     EXPLAIN text);
//   - each input edge: the upstream operator's id, the partitioning, the
//     hash keys, whether it carries late records.
//
// The EXPLAIN text (Spec.Describe) is not part of it: rewording EXPLAIN
// never changes an id.

// IDWriter accumulates the identity of one operator. Every value is written
// with a tag and a length, so that no two sequences of values encode alike.
type IDWriter struct {
	h   hash.Hash
	buf [binary.MaxVarintLen64]byte
}

func (w *IDWriter) tag(t byte, n int) {
	w.buf[0] = t
	w.h.Write(w.buf[:1])
	w.h.Write(w.buf[:binary.PutUvarint(w.buf[:], uint64(n))])
}

// Str writes a string.
func (w *IDWriter) Str(s string) { w.tag('s', len(s)); w.h.Write([]byte(s)) }

// Int writes an integer.
func (w *IDWriter) Int(v int64) { w.tag('i', 0); w.h.Write(w.buf[:binary.PutVarint(w.buf[:], v)]) }

// Bool writes a flag.
func (w *IDWriter) Bool(b bool) {
	if b {
		w.tag('b', 1)
	} else {
		w.tag('b', 0)
	}
}

// Ints writes a list of column indexes.
func (w *IDWriter) Ints(xs []int) {
	w.tag('l', len(xs))
	for _, x := range xs {
		w.Int(int64(x))
	}
}

// Type writes a data type (kind, precision, scale, nullability).
func (w *IDWriter) Type(t types.T) { w.Str(t.String()) }

// Table writes a table's identity: its name, case-insensitively (not its
// options: pointing a table at another topic keeps its operators).
func (w *IDWriter) Table(t *catalog.Table) { w.Str(strings.ToLower(t.Name)) }

// Exprs writes a list of expressions.
func (w *IDWriter) Exprs(es []Expr) {
	w.tag('L', len(es))
	for _, e := range es {
		w.Expr(e)
	}
}

// Expr writes the canonical encoding of an expression tree: a column as
// its index and type, a literal as its type and value, a call as its
// function and arguments, a cast as its kind, target type and argument.
func (w *IDWriter) Expr(e Expr) {
	switch x := e.(type) {
	case *ColumnRef:
		w.tag('c', 0)
		w.Int(int64(x.Index))
		w.Type(x.T)
	case *namedRef:
		w.Expr(x.ColumnRef)
	case *Literal:
		w.tag('v', 0)
		w.Type(x.T)
		if x.Value == nil {
			w.tag('n', 0)
		} else {
			w.Str(types.Format(x.T, x.Value))
		}
	case *Call:
		w.tag('f', len(x.Args))
		w.Str(x.Func)
		w.Type(x.Resolved.Ret)
		for _, a := range x.Args {
			w.Expr(a)
		}
	case *Cast:
		w.tag('x', 0)
		w.Bool(x.Try)
		w.Type(x.T)
		w.Expr(x.Arg)
	default:
		// An expression kind this encoding does not know yet: its text,
		// so that ids stay distinct; give it a case above.
		w.tag('?', 0)
		w.Str(e.String())
	}
}

// AggCalls writes aggregate calls: function, argument column, DISTINCT,
// argument and result types, the FILTER column and LISTAGG's separator.
// The output name is not part of it.
func (w *IDWriter) AggCalls(cs []AggCall) {
	w.tag('a', len(cs))
	for _, c := range cs {
		w.Str(string(c.Func))
		w.Int(int64(c.Arg))
		w.Bool(c.Distinct)
		w.Type(c.ArgT)
		w.Type(c.T)
		if c.HasFilter {
			w.tag('f', c.Filter)
		}
		if c.Func == AggListAgg {
			w.Str(c.Separator)
		}
	}
}

// Window writes window parameters: kind, time column, size, slide,
// offset, session partition columns, processing time or event time.
func (w *IDWriter) Window(s WindowSpec) {
	w.Str(s.Kind)
	w.Int(int64(s.TimeCol))
	w.Int(s.Size)
	w.Int(s.Slide)
	w.Int(s.Offset)
	w.tag('p', len(s.Partition))
	for _, p := range s.Partition {
		w.Str(strings.ToLower(p))
	}
	w.Bool(s.Proctime)
	if s.Attached {
		w.tag('w', s.StartCol)
	}
}

// OperatorID computes o's id from its kind, its spec's identity and its
// input edges (whose operators must have their ids).
func OperatorID(o *Operator) string {
	w := &IDWriter{h: sha1.New()}
	w.Str(o.Spec.Kind())
	o.Spec.Identity(w)
	w.tag('e', len(o.Inputs))
	for _, in := range o.Inputs {
		w.Str(in.From.ID)
		w.Str(in.Partition.String())
		w.Ints(in.Keys)
		w.Bool(in.Late)
	}
	return hex.EncodeToString(w.h.Sum(nil))[:16]
}
