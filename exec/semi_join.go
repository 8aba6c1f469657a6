package exec

import (
	"fmt"

	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/types"
)

// Semi and anti joins (planner.LeftSemi, planner.LeftAnti), Flink's
// StreamingSemiAntiJoinOperator, run by the regular join's operator: the
// same state, the same candidate pairs and residual, other emissions. Each
// left row keeps its count of matching right rows; a semi join emits the
// left row (alone, no right columns) while that count is above zero, an anti
// join while it is zero:
//
//   - a left row that arrives is emitted (+I) if it is out, one that is
//     retracted is retracted (-D) if it was out;
//   - a right row that arrives makes the count of each left row it matches
//     go up: from 0 to 1, a semi join emits the left row (+I), an anti join
//     retracts it (-D); a right row retracted makes it go down: from 1 to 0,
//     the reverse.
//
// A left row whose key is NULL matches nothing: an anti join emits it, a
// semi join never does. The candidate pairs and the residual are built over
// the left columns then the right ones (pairSchema), as for the other
// join types; the output keeps the left columns (joinOp.flushOutput).

// semiAntiSchemas sets the join's pair schema (what the residual reads and
// the builders hold) and the schema it emits, the left columns.
func (j *joinOp) semiAntiSchemas(t *subtask) {
	sp := j.spec
	var pair types.Schema
	pair = append(pair, sp.LeftSchema[:sp.LeftWidth]...)
	pair = append(pair, sp.RightSchema[:sp.RightWidth]...)
	j.emitSch = t.op.Schema.Arrow()
	j.outSch = pair.Arrow()
	j.outT = j.outT[:0]
	for _, c := range pair {
		j.outT = append(j.outT, c.Type)
	}
}

// applySemiAnti is apply for a semi or anti join: row i of b (of input),
// whose key's rows are mine (nil: a NULL key).
func (j *joinOp) applySemiAnti(input int, b Batch, i int, mine *joinKey) error {
	me, other := &j.side[input], &j.side[1-input]
	retract := b.Op(i).IsRetract()
	anti := j.spec.Type == planner.LeftAnti
	if input == 0 {
		var matches int64
		for p := j.pairAt[i]; p < j.pairAt[i+1]; p++ {
			if j.residual == nil || j.mask[p] {
				matches += j.pairs[p].other().n
			}
		}
		if mine == nil { // a NULL key: no state, no match
			if anti {
				return j.emitPadded(0, me, i, retract)
			}
			return nil
		}
		id, row := j.encodeRow(me, i)
		if retract && !me.st.remove(mine, id) {
			return j.unknownRetraction(me)
		}
		if (matches > 0) != anti {
			if err := j.emitPadded(0, me, i, retract); err != nil {
				return err
			}
		}
		if !retract {
			me.st.add(mine, id, row, matches)
		}
		return nil
	}
	if mine == nil {
		return nil // a NULL key matches no left row
	}
	id, row := j.encodeRow(me, i)
	if retract && !me.st.remove(mine, id) {
		return j.unknownRetraction(me)
	}
	for p := j.pairAt[i]; p < j.pairAt[i+1]; p++ {
		if j.residual != nil && !j.mask[p] {
			continue
		}
		pr := &j.pairs[p]
		l := pr.other()
		var flips bool
		if retract {
			l.matches--
			flips = l.matches == 0
		} else {
			l.matches++
			flips = l.matches == 1
		}
		other.st.touchRow(pr.key, int(pr.idx))
		if !flips {
			continue
		}
		// The left row goes out (semi: its first match; anti: its last
		// match went) or is taken back.
		out := retract == anti
		for c := int64(0); c < l.n; c++ {
			if err := j.emitOtherPadded(1, other, pr.key.cols(l), !out); err != nil {
				return err
			}
		}
	}
	if !retract {
		me.st.add(mine, id, row, 0)
	}
	return nil
}

// unknownRetraction is the outcome of a retraction of a row the join does
// not hold: an error, unless rows expire (TTL), when it was dropped.
func (j *joinOp) unknownRetraction(me *joinInput) error {
	if me.st.ttl <= 0 {
		return fmt.Errorf("%s: a retraction of a row the join does not hold: the input changelog is inconsistent", j.owner)
	}
	return nil
}
