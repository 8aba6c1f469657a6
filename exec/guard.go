package exec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/streamsql/streamsql/functions"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// guardForm says which rows reach each argument of a guard.
type guardForm uint8

const (
	// formCase is CASE WHEN w1 THEN t1 ... [ELSE e] END as (w1, t1, ...,
	// [e]), and IF(c, a, b) as CASE WHEN c THEN a ELSE b END: a WHEN is
	// evaluated on the rows no earlier WHEN was TRUE for, its THEN on those
	// of them it is TRUE for, the ELSE on the rows left.
	formCase guardForm = iota
	// formCoalesce: an argument is evaluated on the rows every earlier one
	// is NULL for.
	formCoalesce
	// formAnd and formOr: an argument is evaluated on the rows no earlier
	// one decided (FALSE for AND, TRUE for OR); a NULL decides nothing,
	// as three-valued logic wants (NULL AND FALSE is FALSE).
	formAnd
	formOr
)

var guardForms = map[string]guardForm{
	"CASE": formCase, "IF": formCase,
	"COALESCE": formCoalesce, "IFNULL": formCoalesce,
	"AND": formAnd, "OR": formOr,
}

// guardNode evaluates a CASE, IF, COALESCE, AND or OR with selection
// masks: each argument only on the rows that reach it (guardForm), so that
// an argument that would fail on a row it is not evaluated for (10 / x
// where x = 0 under WHEN x <> 0) costs nothing, and one that fails on a
// row it is evaluated for fails the batch with the kernel's own error. The
// results, valid on the rows that reached each argument, then go to the
// function's kernel, which picks per row what the masks already decided.
//
// An argument that every row reaches, or a column or constant, is
// evaluated over all rows. One that only some rows reach is evaluated over
// all rows first too (no copying), and only when that fails, over its
// selected rows: those rows of the columns it reads are gathered, it is
// evaluated there, and its result scattered back (NULL elsewhere). Once an
// argument failed so, it is evaluated over its selected rows from then on.
// The work is per batch: nothing is allocated per row.
type guardNode struct {
	name   string
	form   guardForm
	args   []node
	argT   []types.T
	kernel functions.Kernel
	t      types.T
	// reads[k] lists the columns args[k] reads; cheap[k] says args[k] is a
	// column or a constant, which costs nothing on extra rows and cannot
	// fail.
	reads [][]int
	cheap []bool
	// guarded[k] is set once args[k] failed over all rows when only some
	// reached it.
	guarded []bool

	// Scratch, reused batch after batch.
	argv      []functions.Vec
	owned     []bool
	undecided []bool
	sel       []bool
	sub       rows
	selIdx    []int32
	idx       *array.Int32Builder
	mem       memory.Allocator
	cctx      context.Context
}

func newGuardNode(form guardForm, x *planner.Call, args []node) *guardNode {
	g := &guardNode{name: x.Func, form: form, args: args, kernel: x.Resolved.Kernel, t: x.Resolved.Ret,
		argT: make([]types.T, len(args)), reads: make([][]int, len(args)), cheap: make([]bool, len(args)),
		guarded: make([]bool, len(args)), argv: make([]functions.Vec, len(args)), owned: make([]bool, len(args))}
	for k, a := range args {
		g.argT[k] = argType(a)
		g.reads[k] = columnsRead(a, nil)
		switch a.(type) {
		case *colNode, *constNode:
			g.cheap[k] = true
		}
	}
	return g
}

// columnsRead appends the columns n reads to cols, each once.
func columnsRead(n node, cols []int) []int {
	switch x := n.(type) {
	case *colNode:
		for _, c := range cols {
			if c == x.idx {
				return cols
			}
		}
		return append(cols, x.idx)
	case *callNode:
		for _, a := range x.args {
			cols = columnsRead(a, cols)
		}
	case *guardNode:
		for _, a := range x.args {
			cols = columnsRead(a, cols)
		}
	case *udfNode:
		for _, a := range x.args {
			cols = columnsRead(a, cols)
		}
	}
	return cols
}

func (g *guardNode) release() {
	for k := range g.argv {
		if g.owned[k] {
			g.argv[k].Release()
		}
		g.argv[k], g.owned[k] = functions.Vec{}, false
	}
}

func (g *guardNode) eval(ctx *functions.Context, in *rows) (functions.Vec, bool, error) {
	n := in.n
	g.undecided = resetMask(g.undecided, n, true)
	g.sel = resetMask(g.sel, n, false)
	left := n // rows still undecided
	switch g.form {
	case formCase:
		k := 0
		for ; k+1 < len(g.args); k += 2 {
			w, err := g.arg(ctx, in, k, g.undecided, left)
			if err != nil {
				g.release()
				return functions.Vec{}, false, err
			}
			wb := boolsOf(w)
			taken := 0
			for i := range n {
				g.sel[i] = false
				if g.undecided[i] && wb.isTrue(i) {
					g.sel[i], g.undecided[i] = true, false
					taken++
				}
			}
			left -= taken
			if _, err := g.arg(ctx, in, k+1, g.sel, taken); err != nil {
				g.release()
				return functions.Vec{}, false, err
			}
		}
		if k < len(g.args) {
			if _, err := g.arg(ctx, in, k, g.undecided, left); err != nil {
				g.release()
				return functions.Vec{}, false, err
			}
		}
	default:
		for k := range g.args {
			v, err := g.arg(ctx, in, k, g.undecided, left)
			if err != nil {
				g.release()
				return functions.Vec{}, false, err
			}
			if left == 0 || k == len(g.args)-1 {
				continue // nothing left to decide for a later argument
			}
			if g.form == formCoalesce {
				for i := range n {
					if g.undecided[i] && validAt(v, i) {
						g.undecided[i] = false
						left--
					}
				}
				continue
			}
			decides := g.form == formOr // OR is decided by TRUE, AND by FALSE
			vb := boolsOf(v)
			for i := range n {
				if !g.undecided[i] {
					continue
				}
				if valid, b := vb.at(i); valid && b == decides {
					g.undecided[i] = false
					left--
				}
			}
		}
	}
	out, err := g.kernel(ctx, g.argv, n)
	g.release()
	if err != nil {
		return functions.Vec{}, false, err
	}
	return out, !out.Const, nil
}

// arg evaluates args[k] for the count rows of in that mask selects and
// keeps the result (valid on those rows) in argv[k].
func (g *guardNode) arg(ctx *functions.Context, in *rows, k int, mask []bool, count int) (functions.Vec, error) {
	var v functions.Vec
	var owned bool
	var err error
	switch {
	case count == 0:
		v = functions.ConstVec(g.argT[k], nil)
	case count == in.n || g.cheap[k]:
		v, owned, err = g.args[k].eval(ctx, in)
	default:
		if !g.guarded[k] {
			if v, owned, err = g.args[k].eval(ctx, in); err == nil {
				break
			}
			// It failed on some row: perhaps one it is not evaluated for.
			g.guarded[k] = true
		}
		v, owned, err = g.evalSelected(ctx, in, k, mask, count)
	}
	if err != nil {
		return functions.Vec{}, err
	}
	g.argv[k], g.owned[k] = v, owned
	return v, nil
}

// evalSelected evaluates args[k] over the count rows of in that mask
// selects: it gathers those rows of the columns args[k] reads, evaluates it
// there, and scatters the result back to in's rows, NULL where mask is
// false.
func (g *guardNode) evalSelected(ctx *functions.Context, in *rows, k int, mask []bool, count int) (functions.Vec, bool, error) {
	cctx := g.computeContext(ctx)
	g.selIdx = g.selIdx[:0]
	for i, m := range mask[:in.n] {
		if m {
			g.selIdx = append(g.selIdx, int32(i))
		}
	}
	if len(g.sub.cols) < len(in.cols) {
		g.sub.cols = make([]arrow.Array, len(in.cols))
	}
	sub := &g.sub
	sub.n = count
	defer func() {
		for _, c := range g.reads[k] {
			if sub.cols[c] != nil {
				sub.cols[c].Release()
				sub.cols[c] = nil
			}
		}
	}()
	for _, c := range g.reads[k] {
		a, err := gatherRows(cctx, g.mem, in.cols[c], g.selIdx, g.idx)
		if err != nil {
			return functions.Vec{}, false, fmt.Errorf("%s: selecting rows: %w", g.name, err)
		}
		sub.cols[c] = a
	}
	v, owned, err := g.args[k].eval(ctx, sub)
	if err != nil || v.Const {
		return v, owned, err // a constant holds for every row
	}
	if owned {
		defer v.Release()
	}
	out, err := scatterRows(cctx, g.mem, v.Array, mask[:in.n], g.idx)
	if err != nil {
		return functions.Vec{}, false, fmt.Errorf("%s: placing rows: %w", g.name, err)
	}
	return functions.ArrayVec(v.Type, out), true, nil
}

// computeContext returns the context Arrow's compute functions allocate
// with (ctx's allocator), made once per allocator.
func (g *guardNode) computeContext(ctx *functions.Context) context.Context {
	mem := ctx.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if g.cctx == nil || g.mem != mem {
		g.mem, g.cctx = mem, compute.WithAllocator(context.Background(), mem)
		if g.idx != nil {
			g.idx.Release()
		}
		g.idx = array.NewInt32Builder(mem)
	}
	return g.cctx
}

// resetMask returns m resized to n, every entry set to v.
func resetMask(m []bool, n int, v bool) []bool {
	if cap(m) < n {
		m = make([]bool, n)
	}
	m = m[:n]
	for i := range m {
		m[i] = v
	}
	return m
}

// bools reads a BOOLEAN argument's rows: a constant or an array.
type bools struct {
	a          *array.Boolean // nil: constant (or an all-NULL array)
	valid, val bool           // the constant
}

func boolsOf(v functions.Vec) bools {
	if v.Const {
		b, ok := v.Value.(bool)
		return bools{valid: ok, val: b}
	}
	a, _ := v.Array.(*array.Boolean) // another type holds only NULLs
	return bools{a: a}
}

func (b bools) at(i int) (valid, val bool) {
	if b.a == nil {
		return b.valid, b.val
	}
	if b.a.IsNull(i) {
		return false, false
	}
	return true, b.a.Value(i)
}

func (b bools) isTrue(i int) bool {
	valid, v := b.at(i)
	return valid && v
}

func validAt(v functions.Vec, i int) bool {
	if v.Const {
		return v.Value != nil
	}
	return v.Array.IsValid(i)
}
