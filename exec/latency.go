package exec

import (
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/streamsql/streamsql/planner"
)

// Latency markers (Flink's LatencyMarker, 'metrics.latency.interval').
//
// With Options.LatencyInterval > 0, every source subtask sends a marker
// carrying its creation time (wall clock) every interval, between two of
// its batches, to one receiver of each of its outputs chosen at random, as
// Flink's sources do. Each operator subtask the marker reaches records its
// age into a histogram kept per source operator (Flink's granularity
// 'operator'), then sends it on to one random receiver of each output; a
// sink records it and drops it. A marker is an element of the stream like
// a batch: it travels behind the batches sent before it and is held back by
// barrier alignment as they are, so it never overtakes a record. It does
// not wait in an operator's buffers (a mini-batch, a window): as in Flink,
// its age is the time records spend travelling and queueing between
// subtasks, not the time an operator holds them by design.
//
// With the option off (0, the default) sources send none and nothing is
// allocated; the cost with it on is one clock read per source batch.

// LatencyBuckets are the upper bounds of the marker age histograms'
// buckets (a last one, +Inf, holds the rest).
var LatencyBuckets = func() []time.Duration {
	out := make([]time.Duration, len(latencyBucketsNs))
	for i, ns := range latencyBucketsNs {
		out[i] = time.Duration(ns)
	}
	return out
}()

// LatencyMarker is what a KindLatencyMarker element carries.
type LatencyMarker struct {
	// Created is when the source subtask made it: nanoseconds since the
	// job started (Job.started, on the monotonic clock, so that an age is
	// never negative when the wall clock is set back).
	Created int64
	// Source is the index of the source operator among the job's sources
	// (Job.latencySources).
	Source int32
}

// LatencyHistogram is the distribution of the ages of the markers of one
// source operator on arrival at one operator subtask.
type LatencyHistogram struct {
	// Source is the id of the source operator the markers came from.
	Source string
	// Count is the markers recorded, Sum their ages added, Max the oldest.
	Count    uint64
	Sum, Max time.Duration
	// Buckets[i] counts the ages <= LatencyBuckets[i] (and above the bound
	// before it); the last one, at len(LatencyBuckets), those above all.
	Buckets []uint64
}

// Mean is the average age (0 without markers).
func (h LatencyHistogram) Mean() time.Duration {
	if h.Count == 0 {
		return 0
	}
	return h.Sum / time.Duration(h.Count)
}

// Quantile estimates the age at quantile q (0 < q <= 1) by linear
// interpolation inside the bucket it falls in, as Prometheus's
// histogram_quantile does; the +Inf bucket answers Max.
func (h LatencyHistogram) Quantile(q float64) time.Duration {
	if h.Count == 0 {
		return 0
	}
	rank := q * float64(h.Count)
	var seen float64
	for i, n := range h.Buckets {
		if n == 0 {
			continue
		}
		if seen+float64(n) >= rank {
			if i >= len(LatencyBuckets) {
				return h.Max
			}
			lo := time.Duration(0)
			if i > 0 {
				lo = LatencyBuckets[i-1]
			}
			hi := min(LatencyBuckets[i], max(h.Max, lo))
			return lo + time.Duration(float64(hi-lo)*(rank-seen)/float64(n))
		}
		seen += float64(n)
	}
	return h.Max
}

// Add returns the sum of h and o (the same source's markers at another
// subtask or in another attempt).
func (h LatencyHistogram) Add(o LatencyHistogram) LatencyHistogram {
	out := LatencyHistogram{Source: h.Source, Count: h.Count + o.Count, Sum: h.Sum + o.Sum, Max: max(h.Max, o.Max),
		Buckets: make([]uint64, len(LatencyBuckets)+1)}
	for i := range out.Buckets {
		if i < len(h.Buckets) {
			out.Buckets[i] += h.Buckets[i]
		}
		if i < len(o.Buckets) {
			out.Buckets[i] += o.Buckets[i]
		}
	}
	return out
}

// MergeLatency adds the histograms of b to those of a, by source, and
// returns the result (a's order, then sources only b has).
func MergeLatency(a, b []LatencyHistogram) []LatencyHistogram {
	out := append([]LatencyHistogram(nil), a...)
next:
	for _, h := range b {
		for i := range out {
			if out[i].Source == h.Source {
				out[i] = out[i].Add(h)
				continue next
			}
		}
		out = append(out, h.Add(LatencyHistogram{}))
	}
	return out
}

// latencyHist is one source's histogram in a subtask: written by the
// subtask's goroutine, read by any.
type latencyHist struct {
	count, sum, max atomic.Int64
	buckets         [len(latencyBucketsNs) + 1]atomic.Uint64
}

// latencyBucketsNs are LatencyBuckets in nanoseconds: from 100 µs to 1 min,
// as an array so that latencyHist has a fixed size.
var latencyBucketsNs = [18]int64{
	100e3, 250e3, 500e3, 1e6, 2.5e6, 5e6, 10e6, 25e6, 50e6, 100e6, 250e6, 500e6,
	1e9, 2.5e9, 5e9, 10e9, 30e9, 60e9,
}

func (h *latencyHist) record(age int64) {
	age = max(age, 0)
	i := 0
	for i < len(latencyBucketsNs) && age > latencyBucketsNs[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.sum.Add(age)
	if age > h.max.Load() {
		h.max.Store(age)
	}
	h.count.Add(1)
}

func (h *latencyHist) snapshot(source string) LatencyHistogram {
	out := LatencyHistogram{Source: source, Count: uint64(h.count.Load()), Sum: time.Duration(h.sum.Load()),
		Max: time.Duration(h.max.Load()), Buckets: make([]uint64, len(h.buckets))}
	for i := range h.buckets {
		out.Buckets[i] = h.buckets[i].Load()
	}
	return out
}

// latencyStats is an operator subtask's histograms, one per source
// operator of the job (indexed as LatencyMarker.Source); nil when markers
// are off.
type latencyStats struct {
	bySource []latencyHist
}

// latencySources lists the job's source operators, whose index a marker
// carries.
func latencySources(g *planner.Graph) []string {
	var ids []string
	for _, op := range g.Operators {
		if scanOf(op) != nil {
			ids = append(ids, op.ID)
		}
	}
	return ids
}

// markerClock is a source subtask's schedule of markers.
type markerClock struct {
	every  time.Duration
	next   time.Time
	source int32
}

// maybeMark sends a marker if one is due at now.
func (t *subtask) maybeMark(em *emitter, now time.Time) error {
	mc := t.marks
	if mc == nil || now.Before(mc.next) {
		return nil
	}
	mc.next = now.Add(mc.every)
	return em.sendMarker(LatencyMarker{Created: int64(now.Sub(t.job.started)), Source: mc.source})
}

// onMarker records the age of a marker arriving at an operator subtask
// and sends it on.
func (t *subtask) onMarker(em *emitter, lm LatencyMarker) error {
	if t.lat != nil && int(lm.Source) < len(t.lat.bySource) {
		t.lat.bySource[lm.Source].record(int64(time.Since(t.job.started)) - lm.Created)
	}
	return em.sendMarker(lm)
}

// sendMarker sends a marker to one receiver, chosen at random, of each of
// the subtask's outputs (not its side outputs of late records).
func (e *emitter) sendMarker(lm LatencyMarker) error {
	for _, o := range e.task.outputs {
		if len(o.targets) == 0 {
			continue
		}
		t := o.targets[rand.IntN(len(o.targets))]
		el := Element{Kind: KindLatencyMarker, Marker: lm, Input: o.input, From: t.from}
		if err := send(e.task.job.ctx, t.task, el, &e.task.m.backpressured); err != nil {
			return err
		}
	}
	return nil
}

// latencyMetrics snapshots the subtask's histograms of the sources whose
// markers reached it.
func (t *subtask) latencyMetrics() []LatencyHistogram {
	if t.lat == nil {
		return nil
	}
	var out []LatencyHistogram
	for i := range t.lat.bySource {
		h := &t.lat.bySource[i]
		if h.count.Load() == 0 {
			continue
		}
		out = append(out, h.snapshot(t.job.latencySources[i]))
	}
	return out
}

// setupLatency prepares a subtask for latency markers when they are on: a
// source's first marker is due at start.
func (t *subtask) setupLatency(start time.Time) {
	srcs := t.job.latencySources
	if srcs == nil {
		return
	}
	if scanOf(t.op) != nil {
		for i, id := range srcs {
			if id == t.op.ID {
				t.marks = &markerClock{every: t.job.opts.LatencyInterval, next: start, source: int32(i)}
			}
		}
		return
	}
	t.lat = &latencyStats{bySource: make([]latencyHist, len(srcs))}
}
