package exec

import (
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/streamsql/streamsql/functions"
)

// Watermarks.
//
// A source subtask of a table with WATERMARK FOR ts AS <expr> evaluates the
// expression over every batch it reads (one kernel call per batch) and keeps,
// per split, the maximum value seen: Flink's bounded out-of-orderness
// generator, applied per split. A source that reads several splits in one
// subtask (a Kafka source: its partitions) says which rows came from which
// split (SplitSource); any other source is one split. The subtask's
// watermark is the minimum over its splits, and it is emitted on all the
// subtask's outputs after each batch that advanced it. Rows whose
// expression is NULL do not move it. The emitted watermark never goes back.
//
// Idleness: with 'scan.watermark.idle-timeout' (or the job's
// 'table.exec.source.idle-timeout') set, a split that has produced no row
// for that long is idle and stops holding the subtask's watermark back,
// until it produces a row again. A subtask whose splits are all idle, or
// that reads no split at all (more subtasks than Kafka partitions), is
// idle: it sends KindIdle downstream, and the receivers leave its channel
// out of their minimum until it sends a batch or a watermark again, as
// Flink's WatermarkStatus. A subtask of a bounded scan whose splits have
// all ended is not idle: it holds its watermark until its input ends. A split that comes back from idleness with rows
// behind the watermark others moved on has late rows, in Flink too. Without
// a timeout an idle split holds the watermark back, as in Flink.
//
// A source subtask at the end of its input emits the largest watermark
// (Flink's MAX_WATERMARK), so every window fires before the job's final
// checkpoint. Processing time is generated apart (proctime.go): its
// watermark is the subtask's clock, and an ended input emits the clock.
//
// Downstream, the runtime combines watermarks by the minimum over an
// operator's active input channels (see aligner) and hands each advance to
// operators that implement watermarkOperator before forwarding it.
//
// Checkpoints: the source's generator starts again from nothing after a
// restore (each split's first batch sets it); the window operators keep
// their own current watermark in their state, so a restore neither fires a
// window again nor lets rows into windows that already fired.

// watermarkOperator is implemented by operators that act on event time.
// watermark is called with each advance of the operator's combined input
// watermark (microseconds since the epoch), before it is forwarded.
type watermarkOperator interface {
	watermark(wm int64, out *emitter) error
}

// maxWatermark is the watermark of an ended input.
const maxWatermark = 1<<63 - 1

// splitWatermark is where one split's watermark stands.
type splitWatermark struct {
	id string
	// max is the largest watermark expression value of the split's rows.
	max int64
	// active is when the split last produced a row (or appeared).
	active time.Time
}

// wholeSubtask names the one split of a source that does not report its
// splits.
const wholeSubtask = ""

// watermarkGen generates a source subtask's watermarks. It is used from
// the source's goroutine only.
type watermarkGen struct {
	ev   *evaluator
	fctx *functions.Context
	// idleTimeout is 'scan.watermark.idle-timeout' (0: splits never idle).
	idleTimeout time.Duration
	// splits are the splits the subtask reads, in the order last reported.
	splits []splitWatermark
	// ended says a split the subtask read has ended (it is no longer
	// listed); bounded that the scan ends once its splits have (not a
	// table followed for its changes, whose splits may all end while it
	// goes on).
	ended, bounded bool
	// emitted is the last watermark sent; idle whether KindIdle was sent
	// since.
	emitted int64
	idle    bool
	// wholeRun is the one run of a source that does not report splits.
	wholeRun [1]SplitRun
}

// newWatermarkGen returns the generator of source subtask t, nil when its
// table has no watermark.
func newWatermarkGen(t *subtask, now time.Time) (*watermarkGen, error) {
	sc := scanOf(t.op)
	if sc == nil || sc.Watermark == nil {
		return nil, nil
	}
	e, err := sc.Watermark.OverFields(sc.Fields)
	if err != nil {
		return nil, fmt.Errorf("watermark of %s: %w", sc.Table.Name, err)
	}
	g := &watermarkGen{
		ev:          compileExpr(e),
		fctx:        &functions.Context{Mem: t.job.opts.Mem, Now: t.job.opts.Now.UnixMicro()},
		idleTimeout: sc.Watermark.IdleTimeout,
		emitted:     minWatermark,
		bounded:     sc.Bounded,
	}
	g.wholeRun[0].Split = wholeSubtask
	if _, ok := t.source.(SplitSource); !ok {
		g.splits = []splitWatermark{{id: wholeSubtask, max: minWatermark, active: now}}
	}
	return g, nil
}

// track brings the split list up to date with what src reads now: a new
// split starts active with no watermark, an ended one is forgotten.
func (g *watermarkGen) track(src Source, now time.Time) {
	ss, ok := src.(SplitSource)
	if !ok {
		return
	}
	ids := ss.Splits()
	same := len(ids) == len(g.splits)
	for i := 0; same && i < len(ids); i++ {
		same = ids[i] == g.splits[i].id
	}
	if same {
		return
	}
	for _, s := range g.splits {
		if !slices.Contains(ids, s.id) {
			g.ended = true
		}
	}
	next := make([]splitWatermark, 0, len(ids))
	for _, id := range ids {
		if i := slices.IndexFunc(g.splits, func(s splitWatermark) bool { return s.id == id }); i >= 0 {
			next = append(next, g.splits[i])
		} else {
			next = append(next, splitWatermark{id: id, max: minWatermark, active: now})
		}
	}
	g.splits = next
}

// observe folds batch b, just returned by src, into the watermarks of the
// splits its rows came from (nil-safe: no watermark).
func (g *watermarkGen) observe(src Source, b Batch, now time.Time) error {
	if g == nil || b.Len() == 0 {
		return nil
	}
	g.track(src, now)
	runs := g.wholeRun[:]
	if ss, ok := src.(SplitSource); ok {
		runs = ss.BatchSplits()
	} else {
		runs[0].End = b.Len()
	}
	if len(runs) == 0 || runs[len(runs)-1].End != b.Len() {
		return fmt.Errorf("the source said its batch of %d rows came from splits %v", b.Len(), runs)
	}
	a, err := g.ev.evalArray(g.fctx, b.Rec)
	if err != nil {
		return fmt.Errorf("watermark expression: %w", err)
	}
	defer a.Release()
	ts, ok := a.(*array.Timestamp)
	if !ok {
		return fmt.Errorf("watermark expression gave %s, not a TIMESTAMP", a.DataType())
	}
	vals := ts.TimestampValues()
	start := 0
	for _, r := range runs {
		s := g.split(r.Split, now)
		m := s.max
		if ts.NullN() == 0 {
			for _, v := range vals[start:r.End] {
				m = max(m, int64(v))
			}
		} else {
			for i := start; i < r.End; i++ {
				if ts.IsValid(i) {
					m = max(m, int64(vals[i]))
				}
			}
		}
		s.max = m
		s.active = now
		start = r.End
	}
	return nil
}

// split returns the state of split id, adding it when the source had not
// listed it yet.
func (g *watermarkGen) split(id string, now time.Time) *splitWatermark {
	for i := range g.splits {
		if g.splits[i].id == id {
			return &g.splits[i]
		}
	}
	g.splits = append(g.splits, splitWatermark{id: id, max: minWatermark, active: now})
	return &g.splits[len(g.splits)-1]
}

// current returns the subtask's watermark at now: the minimum over the
// splits that are not idle; idle when there is none. The watermark of an
// idle subtask is the one it had just before its last splits went idle:
// the minimum over the splits that produced rows last. (Splits go idle in
// the order they were last active, and one that never produced a row goes
// idle first; this is the watermark a check between the last two moments
// would have seen.)
func (g *watermarkGen) current(now time.Time) (wm int64, idle bool) {
	if len(g.splits) == 0 && g.ended && g.bounded {
		// Every split it read has ended: its input ends next, with the
		// largest watermark (end). Said idle now, it would let operators
		// downstream move their watermark on without the rows that its
		// last watermark still fires in operators between (a window
		// aggregate reached by a longer path than a join's other input).
		return minWatermark, false
	}
	wm, idle = maxWatermark, true
	var last time.Time
	for i := range g.splits {
		s := &g.splits[i]
		if s.max != minWatermark && s.active.After(last) {
			last = s.active
		}
		if g.idleTimeout > 0 && now.Sub(s.active) >= g.idleTimeout {
			continue
		}
		wm, idle = min(wm, s.max), false
	}
	if !idle || last.IsZero() {
		return wm, idle
	}
	for i := range g.splits {
		if s := &g.splits[i]; s.max != minWatermark && s.active.Equal(last) {
			wm = min(wm, s.max)
		}
	}
	return wm, true
}

// forward sends what changed since the last call (nil-safe): KindIdle when
// the subtask became idle; the watermark when it advanced, or when the
// subtask is active again after being idle (so that receivers count its
// channel again). A subtask is active again once every split that is not
// idle has produced a row.
func (g *watermarkGen) forward(src Source, em *emitter, now time.Time) error {
	if g == nil {
		return nil
	}
	g.track(src, now)
	wm, idle := g.current(now)
	switch {
	case idle:
		if g.idle {
			return nil
		}
		if wm > g.emitted && wm != maxWatermark {
			g.emitted = wm
			if err := em.broadcast(Element{Kind: KindWatermark, Watermark: wm}); err != nil {
				return err
			}
		}
		g.idle = true
		return em.broadcast(Element{Kind: KindIdle})
	case wm == minWatermark:
		// A split without rows yet: nothing to say (an idle subtask stays
		// idle until the split has rows).
	case wm > g.emitted || g.idle:
		g.idle = false
		g.emitted = max(g.emitted, wm)
		return em.broadcast(Element{Kind: KindWatermark, Watermark: g.emitted})
	}
	return nil
}

// end sends the watermark of an ended input (nil-safe).
func (g *watermarkGen) end(em *emitter) error {
	if g == nil || g.emitted == maxWatermark {
		return nil
	}
	g.emitted, g.idle = maxWatermark, false
	return em.broadcast(Element{Kind: KindWatermark, Watermark: maxWatermark})
}
