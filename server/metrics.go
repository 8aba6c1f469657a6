package server

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
)

// collector exposes the jobs' counters at scrape time: it reads the jobs'
// snapshots (session.JobDetail, exec.Job.SubtaskMetrics), so counting
// costs the jobs nothing per row.
type collector struct {
	s                                           *Server
	in, out, busy, bp, wm, state, stateMem, lag *prometheus.Desc
	cpDuration, cpTotal, cpSize, restarts, late *prometheus.Desc
	latency                                     *prometheus.Desc
}

func newCollector(s *Server) *collector {
	op := []string{"job", "operator", "subtask"}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &collector{s: s,
		in:       d("streamsql_operator_records_in_total", "Rows an operator subtask took in (a source: read).", op...),
		out:      d("streamsql_operator_records_out_total", "Rows an operator subtask emitted.", op...),
		busy:     d("streamsql_operator_busy_seconds_total", "Time an operator subtask spent processing batches.", op...),
		bp:       d("streamsql_operator_backpressured_seconds_total", "Time an operator subtask was blocked on a full downstream inbox.", op...),
		wm:       d("streamsql_operator_watermark_seconds", "The last watermark an operator subtask sent (seconds since the epoch).", op...),
		state:    d("streamsql_state_entries", "Entries an operator subtask holds in state (window groups, interval join rows; else the keys a stateful operator holds in memory).", op...),
		stateMem: d("streamsql_state_memory_bytes", "Bytes a stateful operator subtask's state holds in memory, against its share of 'taskmanager.memory.managed.size'.", op...),
		lag: d("streamsql_kafka_source_lag_records", "Records a Kafka source subtask is behind in a partition: its high watermark (last stable offset reading committed) at the last fetch less the next offset.",
			append(op, "topic", "partition")...),
		cpDuration: d("streamsql_checkpoint_duration_seconds", "Durations of the job's completed checkpoints.", "job"),
		cpTotal:    d("streamsql_checkpoints_total", "Checkpoints of the job by outcome.", "job", "status"),
		cpSize:     d("streamsql_checkpoint_size_bytes", "Size of the job's last completed checkpoint.", "job"),
		restarts:   d("streamsql_job_restarts_total", "Restarts of the job.", "job"),
		late:       d("streamsql_late_records_total", "Late records by what happened to them.", "job", "disposition"),
		latency: d("streamsql_operator_latency_seconds", "Ages of the latency markers of a source operator on arrival at an operator subtask ('metrics.latency.interval').",
			append(op, "source")...),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.in, c.out, c.busy, c.bp, c.wm, c.state, c.stateMem, c.lag, c.cpDuration, c.cpTotal, c.cpSize, c.restarts, c.late, c.latency} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, j := range c.s.sess.Jobs() {
		d, err := c.s.sess.JobDetail(j.ID)
		if err != nil {
			continue
		}
		for _, o := range d.Operators {
			for _, m := range o.Subtasks {
				l := []string{j.ID, o.ID, itoa(m.Subtask)}
				ch <- prometheus.MustNewConstMetric(c.in, prometheus.CounterValue, float64(m.RecordsIn), l...)
				ch <- prometheus.MustNewConstMetric(c.out, prometheus.CounterValue, float64(m.RecordsOut), l...)
				ch <- prometheus.MustNewConstMetric(c.busy, prometheus.CounterValue, m.Busy.Seconds(), l...)
				ch <- prometheus.MustNewConstMetric(c.bp, prometheus.CounterValue, m.Backpressured.Seconds(), l...)
				if m.Watermark != exec.NoWatermark && m.Watermark != math.MaxInt64 {
					ch <- prometheus.MustNewConstMetric(c.wm, prometheus.GaugeValue, float64(m.Watermark)/1e6, l...)
				}
				if m.StateEntries >= 0 {
					ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, float64(m.StateEntries), l...)
				}
				if m.StateBytes >= 0 {
					ch <- prometheus.MustNewConstMetric(c.stateMem, prometheus.GaugeValue, float64(m.StateBytes), l...)
				}
				for _, p := range m.Lag {
					ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(p.Records), append(l, p.Topic, itoa(int(p.Partition)))...)
				}
				for _, h := range m.Latency {
					ch <- prometheus.MustNewConstHistogram(c.latency, h.Count, h.Sum.Seconds(), latencyBuckets(h), append(l, h.Source)...)
				}
			}
		}
		cp := d.Checkpoints
		ch <- prometheus.MustNewConstMetric(c.cpTotal, prometheus.CounterValue, float64(cp.Completed), j.ID, "completed")
		ch <- prometheus.MustNewConstMetric(c.cpTotal, prometheus.CounterValue, float64(cp.Failed), j.ID, "failed")
		buckets := make(map[float64]uint64, len(checkpoint.DurationBuckets))
		for i, b := range checkpoint.DurationBuckets {
			if i < len(cp.Durations.Buckets) {
				buckets[b.Seconds()] = cp.Durations.Buckets[i]
			} else {
				buckets[b.Seconds()] = 0
			}
		}
		ch <- prometheus.MustNewConstHistogram(c.cpDuration, cp.Durations.Count, cp.Durations.Sum.Seconds(), buckets, j.ID)
		if cp.LastID > 0 {
			ch <- prometheus.MustNewConstMetric(c.cpSize, prometheus.GaugeValue, float64(cp.LastSize), j.ID)
		}
		ch <- prometheus.MustNewConstMetric(c.restarts, prometheus.CounterValue, float64(j.Restarts), j.ID)
		ch <- prometheus.MustNewConstMetric(c.late, prometheus.CounterValue, float64(j.Late), j.ID, "dropped")
		ch <- prometheus.MustNewConstMetric(c.late, prometheus.CounterValue, float64(j.LateRouted), j.ID, "routed")
	}
}

// latencyBuckets are h's buckets as Prometheus counts them: cumulative, by
// upper bound in seconds (the +Inf bucket is the count).
func latencyBuckets(h exec.LatencyHistogram) map[float64]uint64 {
	out := make(map[float64]uint64, len(exec.LatencyBuckets))
	var sum uint64
	for i, b := range exec.LatencyBuckets {
		if i < len(h.Buckets) {
			sum += h.Buckets[i]
		}
		out[b.Seconds()] = sum
	}
	return out
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
