package exec

import (
	"sync"
)

// alignGroup is a watermark alignment group (Flink's FLIP-182,
// 'scan.watermark.alignment.group' and 'scan.watermark.alignment.max-drift'):
// the source subtasks of a job whose tables name the group. A member whose
// watermark is more than its table's max drift ahead of the smallest watermark of
// the group's members pauses: it reads nothing (it still serves
// checkpoints) until the smallest moves up. So an input that is faster to
// read does not run ahead of the others, and an operator that waits for
// the slowest watermark (an interval or window join, a window over a
// union) holds only about the drift's worth of the faster inputs.
//
// The members share their watermarks in process, at once: a paused one
// resumes as soon as the group's smallest allows it (Flink's sources
// report every update interval; here there is none to set). A member holds
// the group back only once it has a watermark, and not while it is idle
// or after its input ended; so the member with the smallest watermark never
// pauses, and a group always has a member that reads. As in Flink, a
// member that stops producing without going idle (no idle timeout) holds
// the others paused.
type alignGroup struct {
	mu      sync.Mutex
	members map[*subtask]alignMember
	// low is the smallest watermark of the members that hold the group
	// back (maxWatermark: none); moved is closed when low moves up.
	low   int64
	moved chan struct{}
}

// alignMember is a member's last announced watermark and whether it holds
// the group back (it has a watermark, is not idle and has not ended).
type alignMember struct {
	wm    int64
	holds bool
}

// alignGroupOf returns the job's group name.
func (j *Job) alignGroupOf(name string) *alignGroup {
	j.alignMu.Lock()
	defer j.alignMu.Unlock()
	if j.align == nil {
		j.align = map[string]*alignGroup{}
	}
	g, ok := j.align[name]
	if !ok {
		g = &alignGroup{members: map[*subtask]alignMember{}, low: maxWatermark, moved: make(chan struct{})}
		j.align[name] = g
	}
	return g
}

// join adds t to the group, holding nothing back until it announces a
// watermark.
func (g *alignGroup) join(t *subtask) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.members[t] = alignMember{wm: minWatermark}
}

// announce records t's watermark wm (minWatermark: none yet), whether t
// is idle, or that its input ended (or it stopped).
func (g *alignGroup) announce(t *subtask, wm int64, idle, ended bool) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	m := alignMember{wm: wm, holds: wm != minWatermark && !idle && !ended}
	if g.members[t] == m {
		return
	}
	g.members[t] = m
	low := int64(maxWatermark)
	for _, m := range g.members {
		if m.holds {
			low = min(low, m.wm)
		}
	}
	if low > g.low {
		close(g.moved)
		g.moved = make(chan struct{})
	}
	g.low = low
}

// pause reports whether a member at watermark wm, allowed drift
// (microseconds) ahead of the group's smallest, must wait, and returns the
// channel closed when the smallest moves up.
func (g *alignGroup) pause(wm, drift int64) (bool, <-chan struct{}) {
	if g == nil || wm == minWatermark {
		return false, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.low == maxWatermark || wm-g.low <= drift {
		return false, nil
	}
	return true, g.moved
}
