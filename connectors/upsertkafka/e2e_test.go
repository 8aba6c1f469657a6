package upsertkafka_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
	_ "github.com/streamsql/streamsql/connectors/upsertkafka"
	"github.com/streamsql/streamsql/session"
)

// TestPageViewsExactlyOnce runs the page-view count of DESIGN.md through
// the engine: clicks from a kafka topic, COUNT(*) by app_id into an
// exactly-once upsert-kafka sink with checkpoints, under both transaction
// protocols; the last committed value of every key is the true count.
func TestPageViewsExactlyOnce(t *testing.T) {
	kafkatest.EachProtocol(t, func(t *testing.T, opts []kfake.Opt) {
		addr := kafkatest.Start(t, 4, []string{"clicks", "pv"}, opts...)
		const n, apps = 20000, 50
		want := map[string]int{}
		var msgs []string
		for i := 0; i < n; i++ {
			app := fmt.Sprintf("app-%02d", (i*7)%apps)
			want[app]++
			msgs = append(msgs, fmt.Sprintf(`{"app_id":"%s","user_id":%d}`, app, i))
		}
		kafkatest.Produce(t, addr, "clicks", -1, msgs...)
		s, err := session.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		ddl := strings.ReplaceAll(`
CREATE TABLE clicks (app_id STRING, user_id BIGINT) WITH ('connector'='kafka', 'topic'='clicks',
  'properties.bootstrap.servers'='ADDR', 'properties.group.id'='pv-job', 'format'='json',
  'scan.bounded.mode'='latest-offset');
CREATE TABLE pv (app_id STRING, pv BIGINT, PRIMARY KEY (app_id) NOT ENFORCED) WITH ('connector'='upsert-kafka',
  'topic'='pv', 'properties.bootstrap.servers'='ADDR', 'key.format'='json', 'value.format'='json',
  'sink.delivery-guarantee'='exactly-once');
SET 'execution.checkpointing.interval' = '50ms';
SET 'parallelism.default' = '2';
INSERT INTO pv SELECT app_id, COUNT(*) AS pv FROM clicks GROUP BY app_id;`, "ADDR", addr)
		if _, err := s.Execute(ctx, ddl); err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := s.WaitJobs(wctx); err != nil {
			t.Fatal(err)
		}
		for _, j := range s.Jobs() {
			t.Logf("%+v", j)
			if j.Err != nil {
				t.Fatal(j.Err)
			}
		}
		last := map[string]string{}
		for _, l := range kafkatest.Values(kafkatest.Read(t, addr, "pv", true)) {
			k, v, _ := strings.Cut(l, "|")
			last[k] = v
		}
		if len(last) != apps {
			t.Fatalf("%d keys, want %d", len(last), apps)
		}
		for app, c := range want {
			k := fmt.Sprintf(`{"app_id":"%s"}`, app)
			if w := fmt.Sprintf(`{"app_id":"%s","pv":%d}`, app, c); last[k] != w {
				t.Fatalf("key %s: last value %s, want %s", k, last[k], w)
			}
		}
		if o := kafkatest.Ongoing(t, addr); len(o) != 0 {
			t.Fatalf("open transactions left: %v", o)
		}
	})
}

// TestPageViewsStopAndResume stops an unbounded exactly-once job after its
// input was read and checkpointed (pre-committed transactions may be left
// uncommitted), produces more clicks and resubmits the job on the same data
// directory: it resumes from its checkpoint, commits what the checkpoint
// recorded, and the last committed value of every key is the true count.
// The consumer group shows the job's progress.
func TestPageViewsStopAndResume(t *testing.T) {
	kafkatest.EachProtocol(t, func(t *testing.T, opts []kfake.Opt) {
		addr := kafkatest.Start(t, 4, []string{"clicks", "pv"}, opts...)
		const apps = 30
		want := map[string]int{}
		produce := func(from, to int) {
			var msgs []string
			for i := from; i < to; i++ {
				app := fmt.Sprintf("app-%02d", (i*7)%apps)
				want[app]++
				msgs = append(msgs, fmt.Sprintf(`{"app_id":"%s","user_id":%d}`, app, i))
			}
			kafkatest.Produce(t, addr, "clicks", -1, msgs...)
		}
		produce(0, 10000)
		dir := t.TempDir()
		ddl := strings.ReplaceAll(`
CREATE TABLE clicks (app_id STRING, user_id BIGINT) WITH ('connector'='kafka', 'topic'='clicks',
  'properties.bootstrap.servers'='ADDR', 'properties.group.id'='pv-job', 'format'='json');
CREATE TABLE pv (app_id STRING, pv BIGINT, PRIMARY KEY (app_id) NOT ENFORCED) WITH ('connector'='upsert-kafka',
  'topic'='pv', 'properties.bootstrap.servers'='ADDR', 'key.format'='json', 'value.format'='json',
  'sink.delivery-guarantee'='exactly-once');
SET 'execution.checkpointing.interval' = '50ms';
SET 'parallelism.default' = '2';`, "ADDR", addr)
		insert := "INSERT INTO pv SELECT app_id, COUNT(*) AS pv FROM clicks GROUP BY app_id"
		ctx := context.Background()
		s, err := session.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Execute(ctx, ddl); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Execute(ctx, insert)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool {
			j := s.Jobs()[0]
			return j.RecordsIn == 10000 && j.Checkpoints.Completed >= 2
		})
		if _, err := s.Execute(ctx, "STOP JOB '"+rs[0].JobID+"'"); err != nil {
			t.Fatal(err)
		}
		produce(10000, 25000)
		rs, err = s.Execute(ctx, insert)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rs[0].Message, "restored") {
			t.Fatalf("the job did not resume: %q", rs[0].Message)
		}
		waitFor(t, func() bool {
			last := map[string]string{}
			for _, l := range kafkatest.Values(kafkatest.Read(t, addr, "pv", true)) {
				k, v, _ := strings.Cut(l, "|")
				last[k] = v
			}
			for app, c := range want {
				if last[fmt.Sprintf(`{"app_id":"%s"}`, app)] != fmt.Sprintf(`{"app_id":"%s","pv":%d}`, app, c) {
					return false
				}
			}
			return len(last) == apps
		})
		// The consumer group reaches the end of the input.
		waitFor(t, func() bool {
			resp, err := kadm.NewClient(kafkatest.Client(t, addr)).FetchOffsets(ctx, "pv-job")
			if err != nil {
				return false
			}
			total := int64(0)
			resp.Each(func(o kadm.OffsetResponse) { total += o.At })
			return total == 25000
		})
		for _, j := range s.Jobs() {
			if j.Err != nil && !strings.Contains(j.Err.Error(), "stopped") {
				t.Fatalf("job %s: %v", j.ID, j.Err)
			}
		}
		s.StopJobs()
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
