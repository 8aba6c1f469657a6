package planner

// Generic walks over plans and their expressions, for rules and checks
// (go-mysql-server's transform helpers are the model): a rule says what it
// does to one node; the walk visits every node kind alike.

// NodeFunc rewrites one node; changed says whether it returned another node.
type NodeFunc func(n Node) (out Node, changed bool, err error)

// Transform rewrites the tree bottom-up: the children first, then the node
// (rebuilt with WithChildren when a child changed) is passed to f. Nodes
// nothing changed under are returned as they are.
func Transform(n Node, f NodeFunc) (Node, bool, error) {
	ch := n.Children()
	var newCh []Node
	for i, c := range ch {
		nc, changed, err := Transform(c, f)
		if err != nil {
			return nil, false, err
		}
		if changed {
			if newCh == nil {
				newCh = append([]Node(nil), ch...)
			}
			newCh[i] = nc
		}
	}
	any := newCh != nil
	if any {
		n = n.WithChildren(newCh)
	}
	out, changed, err := f(n)
	if err != nil {
		return nil, false, err
	}
	return out, any || changed, nil
}

// TransformUp is Transform for a rewrite that cannot fail and whose
// result is compared by identity: f returns n itself to keep it.
func TransformUp(n Node, f func(Node) Node) Node {
	out, _, _ := Transform(n, func(n Node) (Node, bool, error) {
		o := f(n)
		return o, o != n, nil
	})
	return out
}

// TransformExprs applies f to every expression of every node (Node.Expressions),
// rebuilding the nodes whose expressions changed.
func TransformExprs(n Node, f func(Expr) Expr) Node {
	return TransformUp(n, func(n Node) Node {
		es := n.Expressions()
		if len(es) == 0 {
			return n
		}
		out := make([]Expr, len(es))
		changed := false
		for i, e := range es {
			out[i] = f(e)
			changed = changed || out[i] != e
		}
		if !changed {
			return n
		}
		return n.WithExpressions(out)
	})
}

// Inspect calls f on every node, parents before children, and stops at
// the first error.
func Inspect(n Node, f func(Node) error) error {
	if err := f(n); err != nil {
		return err
	}
	for _, c := range n.Children() {
		if err := Inspect(c, f); err != nil {
			return err
		}
	}
	return nil
}
