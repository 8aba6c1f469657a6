package main

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/streamsql/streamsql/internal/testenv"
)

// TestSummarizeCheckpoints: the stretches between polls are told apart by
// the checkpoints' history: inside a checkpoint (its synchronous part, to
// its last ack, and its upload), outside every one, or across a start or
// an end (in no stretch); savepoints and failed checkpoints count in the
// stretches but not among the completed checkpoints' figures.
func TestSummarizeCheckpoints(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	h := soakCheckpointsJSON{History: []soakCheckpoint{
		// 2 s to the last ack, then 2 s of upload.
		{ID: 1, Status: "COMPLETED", Triggered: at(10), DurationMS: 4000, AckedMS: 2000, Size: 100, Incremental: 100, Uploaded: 80},
		{ID: 2, Status: "FAILED", Triggered: at(20), DurationMS: 1000},
		{ID: 3, Status: "COMPLETED", Savepoint: true, Triggered: at(30), DurationMS: 1000, AckedMS: 1000, Size: 500},
		{ID: 4, Status: "COMPLETED", Triggered: at(40), DurationMS: 2000, AckedMS: 1000, Size: 300, Incremental: 200, Uploaded: 40},
	}}
	// A poll every second, 1,000 records a second outside checkpoints and
	// 100 inside them, 0.5 CPU s a second; the input ends at 45 s.
	var ticks []soakTick
	var records int64
	for s := 0; s <= 50; s++ {
		ticks = append(ticks, soakTick{at: at(float64(s)), records: records, cpu: time.Duration(s) * time.Second / 2})
		inside := (s >= 10 && s < 14) || s == 20 || s == 30 || (s >= 40 && s < 42)
		switch {
		case s >= 45:
		case inside:
			records += 100
		default:
			records += 1000
		}
	}
	got := summarizeCheckpoints(h, ticks)
	want := soakCheckpoints{Completed: 2, Failed: 1, MeanSeconds: 3, MeanAckedSeconds: 1.5, MaxSeconds: 4, LastSeconds: 2,
		LastSizeBytes: 300, MeanIncrementalBytes: 150, MeanUploadedBytes: 60, LastUploadedBytes: 40,
		// 10-14, 20-21, 30-31, 40-42 inside; the other stretches up to
		// 45 s (the last count of records) outside.
		During: soakStretch{Seconds: 8, Records: 800, CPUSeconds: 4, RecordsPerSecond: 100, RecordsPerCPUSecond: 200},
		// The savepoint's 30-31 is to its last ack.
		Synchronous:     soakStretch{Seconds: 4, Records: 400, CPUSeconds: 2, RecordsPerSecond: 100, RecordsPerCPUSecond: 200},
		Upload:          soakStretch{Seconds: 3, Records: 300, CPUSeconds: 1.5, RecordsPerSecond: 100, RecordsPerCPUSecond: 200},
		Outside:         soakStretch{Seconds: 37, Records: 37000, CPUSeconds: 18.5, RecordsPerSecond: 1000, RecordsPerCPUSecond: 2000},
		ThroughputRatio: 0.1, CPUThroughputRatio: 0.1,
	}
	if fmt.Sprint(round(got)) != fmt.Sprint(round(want)) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
}

// round rounds the figures of s to 1e-9, for comparison.
func round(s soakCheckpoints) soakCheckpoints {
	r := func(f *float64) { *f = math.Round(*f*1e9) / 1e9 }
	for _, f := range []*float64{&s.MeanSeconds, &s.MeanAckedSeconds, &s.MaxSeconds, &s.LastSeconds, &s.MeanIncrementalBytes,
		&s.MeanUploadedBytes, &s.ThroughputRatio, &s.CPUThroughputRatio} {
		r(f)
	}
	for _, st := range []*soakStretch{&s.During, &s.Synchronous, &s.Upload, &s.Outside} {
		r(&st.Seconds)
		r(&st.CPUSeconds)
		r(&st.RecordsPerSecond)
		r(&st.RecordsPerCPUSecond)
	}
	return s
}

// TestBenchSoakCheckpointsOnS3: a soak of the group-by with its
// checkpoints on the S3 server sums up the checkpoints it took (each
// uploaded bytes, acked before it completed), tells the stretches outside
// them, and with --restore restores the job from the bucket on
// a new server with an empty data directory.
func TestBenchSoakCheckpointsOnS3(t *testing.T) {
	srv := testenv.S3(t)
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"} {
		t.Setenv(v, srv.Var(v))
	}
	dir := fmt.Sprintf("s3://%s/%s-%d", testenv.S3Bucket, t.Name(), time.Now().UnixNano())
	sum, _ := runSoak(t, "--groupby", "--keys", "50000", "--duration", "20s", "--interval", "5s", "--checkpoint-dir", dir,
		"--set", "s3.endpoint="+srv.Endpoint, "--set", "s3.path.style.access=true", "--set", "execution.checkpointing.interval=2s", "--restore")
	c := sum.Checkpoints
	if c.Completed < 2 || c.MeanUploadedBytes <= 0 || c.LastSizeBytes <= 0 || c.MeanAckedSeconds > c.MeanSeconds {
		t.Errorf("checkpoints: %+v; want two or more, uploaded, acked before they completed", c)
	}
	// A checkpoint may be shorter than a poll, so that no stretch lies
	// inside one (TestSummarizeCheckpoints tells the stretches apart).
	if c.Outside.Seconds <= 0 || c.Outside.Records <= 0 || c.During.Seconds+c.Outside.Seconds > sum.ElapsedSeconds {
		t.Errorf("stretches: during %+v, outside %+v over %.1f s; want records outside, and no more time than the run's", c.During, c.Outside, sum.ElapsedSeconds)
	}
	if r := sum.Restore; r == nil || r.Checkpoint < 1 || r.SizeBytes <= 0 || r.Seconds <= 0 {
		t.Errorf("restore: %+v; want a checkpoint of the run restored", r)
	}
}
