package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"
)

// soakCheckpoint is a checkpoint of GET /api/v1/jobs/{id}/checkpoints'
// history.
type soakCheckpoint struct {
	ID          int64     `json:"id"`
	Status      string    `json:"status"`
	Savepoint   bool      `json:"savepoint"`
	Triggered   time.Time `json:"trigger_time"`
	DurationMS  int64     `json:"duration_ms"`
	AckedMS     int64     `json:"acked_ms"`
	Size        int64     `json:"size_bytes"`
	Incremental int64     `json:"incremental_bytes"`
	Uploaded    int64     `json:"uploaded_bytes"`
}

func (c soakCheckpoint) end() time.Time {
	return c.Triggered.Add(time.Duration(c.DurationMS) * time.Millisecond)
}

// acked is when every subtask had acknowledged a completed checkpoint: the
// end of its synchronous part.
func (c soakCheckpoint) acked() time.Time {
	return c.Triggered.Add(time.Duration(c.AckedMS) * time.Millisecond)
}

// soakCheckpointsJSON is GET /api/v1/jobs/{id}/checkpoints.
type soakCheckpointsJSON struct {
	Restored int64            `json:"restored"`
	History  []soakCheckpoint `json:"history"`
}

// checkpoints reads the job's checkpoints.
func (s *soakServer) checkpoints(id string) (soakCheckpointsJSON, error) {
	var r soakCheckpointsJSON
	resp, err := http.Get(s.url + "/api/v1/jobs/" + id + "/checkpoints")
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return r, err
	}
	if resp.StatusCode != http.StatusOK {
		return r, fmt.Errorf("GET /api/v1/jobs/%s/checkpoints: %s: %s", id, resp.Status, body)
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, fmt.Errorf("GET /api/v1/jobs/%s/checkpoints: %v: %s", id, err, body)
	}
	return r, nil
}

// summarizeCheckpoints sums up the completed checkpoints of h and splits
// the stretches between ticks into those inside a checkpoint and those
// outside every one (soakCheckpoints). The ticks after the one at which
// the records in reached their last count are left out, as soakWindows
// leaves them out.
func summarizeCheckpoints(h soakCheckpointsJSON, ticks []soakTick) soakCheckpoints {
	var s soakCheckpoints
	var incremental, uploaded int64
	for _, c := range h.History {
		if c.Status != "COMPLETED" {
			s.Failed++
			continue
		}
		if c.Savepoint {
			continue
		}
		d := float64(c.DurationMS) / 1000
		s.Completed++
		s.MeanSeconds += d
		s.MeanAckedSeconds += float64(c.AckedMS) / 1000
		s.MaxSeconds = max(s.MaxSeconds, d)
		s.LastSeconds, s.LastSizeBytes, s.LastUploadedBytes = d, c.Size, c.Uploaded
		incremental += c.Incremental
		uploaded += c.Uploaded
	}
	if s.Completed > 0 {
		n := float64(s.Completed)
		s.MeanSeconds /= n
		s.MeanAckedSeconds /= n
		s.MeanIncrementalBytes, s.MeanUploadedBytes = float64(incremental)/n, float64(uploaded)/n
	}
	n := len(ticks)
	for n > 1 && ticks[n-2].records == ticks[n-1].records {
		n--
	}
	for i := 1; i < n; i++ {
		a, b := ticks[i-1], ticks[i]
		within := func(from, to time.Time) bool { return !from.After(a.at) && !to.Before(b.at) }
		var in []*soakStretch
		touches := false
		for _, c := range h.History {
			if within(c.Triggered, c.end()) {
				in = append(in, &s.During)
				if c.Status == "COMPLETED" && within(c.Triggered, c.acked()) {
					in = append(in, &s.Synchronous)
				}
				if c.Status == "COMPLETED" && within(c.acked(), c.end()) {
					in = append(in, &s.Upload)
				}
				break
			}
			if c.Triggered.Before(b.at) && c.end().After(a.at) {
				touches = true
			}
		}
		if len(in) == 0 && !touches {
			in = append(in, &s.Outside)
		}
		for _, st := range in {
			st.Seconds += b.at.Sub(a.at).Seconds()
			st.Records += b.records - a.records
			st.CPUSeconds += (b.cpu - a.cpu).Seconds()
		}
	}
	for _, st := range []*soakStretch{&s.During, &s.Synchronous, &s.Upload, &s.Outside} {
		st.RecordsPerSecond = ratio(float64(st.Records), st.Seconds)
		st.RecordsPerCPUSecond = ratio(float64(st.Records), st.CPUSeconds)
	}
	s.ThroughputRatio = ratio(s.During.RecordsPerSecond, s.Outside.RecordsPerSecond)
	s.CPUThroughputRatio = ratio(s.During.RecordsPerCPUSecond, s.Outside.RecordsPerCPUSecond)
	return s
}

func (s soakCheckpoints) report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\ncheckpoints: %d completed, %d failed; duration mean %.2f s (acked after %.2f s), max %.2f s, last %.2f s; last size %s; mean incremental %s; uploaded mean %s, last %s\n",
		s.Completed, s.Failed, s.MeanSeconds, s.MeanAckedSeconds, s.MaxSeconds, s.LastSeconds, byteSize(s.LastSizeBytes),
		byteSize(int64(s.MeanIncrementalBytes)), byteSize(int64(s.MeanUploadedBytes)), byteSize(s.LastUploadedBytes))
	b.WriteString("| while | s | records | CPU s | records/s | records per CPU second | records/s over none's |\n|---|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range []struct {
		name string
		st   soakStretch
	}{{"a checkpoint ran", s.During}, {"- its synchronous part", s.Synchronous}, {"- its upload", s.Upload}, {"none ran", s.Outside}} {
		fmt.Fprintf(&b, "| %s | %.1f | %d | %.1f | %s | %s | %.2f |\n", r.name, r.st.Seconds, r.st.Records, r.st.CPUSeconds,
			rate(r.st.RecordsPerSecond), rate(r.st.RecordsPerCPUSecond), ratio(r.st.RecordsPerSecond, s.Outside.RecordsPerSecond))
	}
	return b.String()
}

// restoreSoak starts a new server on an empty data directory in work and
// submits job to it, which restores the job's latest checkpoint from its
// checkpoint directory (--restore); the server is killed afterwards.
func restoreSoak(ctx context.Context, c soakConfig, self, work, job string) (soakRestore, error) {
	var r soakRestore
	data := filepath.Join(work, "restore-data")
	args, err := c.serverArgs(work, data)
	if err != nil {
		return r, err
	}
	srv, err := startSoakServer(ctx, self, data, false, args...)
	if err != nil {
		return r, err
	}
	defer srv.kill()
	start := time.Now()
	id, err := srv.submit(job)
	if err != nil {
		return r, fmt.Errorf("the restore: %w", err)
	}
	r.Seconds, r.CPUSeconds = time.Since(start).Seconds(), procCPU(srv.pid()).Seconds()
	cp, err := srv.checkpoints(id)
	if err != nil {
		return r, err
	}
	if cp.Restored == 0 {
		return r, fmt.Errorf("the job started on the new server restored no checkpoint; its log:\n%s", lastLines(srv.log.String(), 40))
	}
	r.Checkpoint = cp.Restored
	// The checkpoint downloaded into the new data directory: the history
	// read before the kill may end before it (one completed meanwhile).
	r.SizeBytes, _ = streamsqlStateSize(filepath.Join(work, "restore-data"))
	return r, nil
}
