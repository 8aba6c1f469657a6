package upsertkafka_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
	"github.com/streamsql/streamsql/internal/testenv"
	"github.com/streamsql/streamsql/session"
)

// TestAvroConfluentKeyAndValue counts clicks by app into an exactly-once
// upsert-kafka table whose key and value are avro-confluent (options
// 'key.avro-confluent.url' and 'value.avro-confluent.url', as Flink
// prefixes them) with a real schema registry: the sink registers the key's
// schema under '<topic>-key' and the value's under '<topic>-value', and
// hamba/avro, with the schemas the records' ids name, reads the true count
// as the last value of every key.
func TestAvroConfluentKeyAndValue(t *testing.T) {
	reg := testenv.Registry(t)
	addr := kafkatest.Start(t, 2, []string{"clicks", "apv"})
	const n, apps = 5000, 20
	want := map[string]int64{}
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
	ddl := strings.NewReplacer("ADDR", addr, "REG", reg.URL).Replace(`
CREATE TABLE clicks (app_id STRING, user_id BIGINT) WITH ('connector'='kafka', 'topic'='clicks',
  'properties.bootstrap.servers'='ADDR', 'format'='json', 'scan.bounded.mode'='latest-offset');
CREATE TABLE apv (app_id STRING NOT NULL, pv BIGINT, PRIMARY KEY (app_id) NOT ENFORCED) WITH ('connector'='upsert-kafka',
  'topic'='apv', 'properties.bootstrap.servers'='ADDR',
  'key.format'='avro-confluent', 'key.avro-confluent.url'='REG',
  'value.format'='avro-confluent', 'value.avro-confluent.url'='REG',
  'sink.delivery-guarantee'='exactly-once');
SET 'execution.checkpointing.interval' = '50ms';
INSERT INTO apv SELECT app_id, COUNT(*) AS pv FROM clicks GROUP BY app_id;`)
	if _, err := s.Execute(ctx, ddl); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := s.WaitJobs(wctx); err != nil {
		t.Fatal(err)
	}
	for _, j := range s.Jobs() {
		if j.Err != nil {
			t.Fatal(j.Err)
		}
	}
	for _, subject := range []string{"apv-key", "apv-value"} {
		if v := get(t, reg.URL+"/subjects/"+subject+"/versions"); v != "[1]" {
			t.Fatalf("subject %s: versions %s, want [1]", subject, v)
		}
	}
	schemas := map[uint32]avro.Schema{}
	decode := func(b []byte, v any) {
		t.Helper()
		if len(b) < 5 || b[0] != 0 {
			t.Fatalf("%x is not in the Confluent wire format", b)
		}
		id := binary.BigEndian.Uint32(b[1:5])
		sch, ok := schemas[id]
		if !ok {
			var s struct{ Schema string }
			if err := json.Unmarshal([]byte(get(t, fmt.Sprintf("%s/schemas/ids/%d", reg.URL, id))), &s); err != nil {
				t.Fatal(err)
			}
			sch = avro.MustParse(s.Schema)
			schemas[id] = sch
		}
		if err := avro.Unmarshal(sch, b[5:], v); err != nil {
			t.Fatalf("decoding %x: %v", b, err)
		}
	}
	last := map[string]int64{}
	for _, r := range kafkatest.ReadRecords(t, addr, "apv", true) {
		var k struct {
			App string `avro:"app_id"`
		}
		var v struct {
			App string `avro:"app_id"`
			PV  *int64 `avro:"pv"`
		}
		decode(r.Key, &k)
		decode(r.Value, &v)
		if v.App != k.App || v.PV == nil {
			t.Fatalf("key %s, value %+v", k.App, v)
		}
		last[k.App] = *v.PV
	}
	if len(schemas) != 2 {
		t.Fatalf("records written with %d schema ids, want 2 (the key's and the value's)", len(schemas))
	}
	if len(last) != apps {
		t.Fatalf("%d keys, want %d", len(last), apps)
	}
	for app, c := range want {
		if last[app] != c {
			t.Fatalf("key %s: last pv %d, want %d", app, last[app], c)
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	return strings.TrimSpace(string(b))
}
