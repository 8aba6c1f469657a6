package kafka

import (
	"bytes"
	"context"
	be "encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamsql/streamsql/connectors/kafka/kafkatest"
	"github.com/streamsql/streamsql/internal/testenv"
)

// Writer schemas of the records another producer writes into avro-in: v1,
// then v2 with a field more (which the table lacks and the job skips).
// user_id is an int, which the table reads as BIGINT; ts is in
// milliseconds.
const (
	avroWriterV1 = `{"type":"record","name":"Click","namespace":"test","fields":[` +
		`{"name":"click_id","type":"long"},{"name":"app_id","type":"string"},` +
		`{"name":"user_id","type":["null","int"]},` +
		`{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}}]}`
	avroWriterV2 = `{"type":"record","name":"Click","namespace":"test","fields":[` +
		`{"name":"click_id","type":"long"},{"name":"referrer","type":"string","default":""},` +
		`{"name":"app_id","type":"string"},{"name":"user_id","type":["null","int"]},` +
		`{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}}]}`
)

// TestAvroConfluent runs a job that reads avro-confluent records another
// producer (hamba/avro, with two versions of its schema registered in a
// real schema registry, scripts/schema-registry.sh) wrote to a topic, and
// writes avro-confluent records to another topic. An independent reader
// (the registry's REST API for the writer schema, hamba/avro to decode)
// finds every row, with the schema the sink registered under the subject
// '<topic>-value'.
func TestAvroConfluent(t *testing.T) {
	reg := testenv.Registry(t)
	b := startBroker(t, 1, false, "avro-in", "avro-out")
	dir := t.TempDir()
	const n = 2000
	ids := [2]int{registerSchema(t, reg.URL, "avro-in-value", avroWriterV1), registerSchema(t, reg.URL, "avro-in-value", avroWriterV2)}
	if ids[0] == ids[1] {
		t.Fatalf("the two writer schemas got one id %d", ids[0])
	}
	schemas := [2]avro.Schema{avro.MustParse(avroWriterV1), avro.MustParse(avroWriterV2)}
	base := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	cl := kafkatest.Client(t, b.addr)
	var recs []*kgo.Record
	for id := 1; id <= n; id++ {
		v := 0
		if id > n/2 {
			v = 1 // the second half is written with v2
		}
		row := map[string]any{"click_id": int64(id), "app_id": appName(appOf(id, apps)),
			"user_id": map[string]any{"int": id % 100}, "ts": base.Add(time.Duration(id) * time.Millisecond), "referrer": "r"}
		if id%10 == 0 {
			row["user_id"] = nil
		}
		body, err := avro.Marshal(schemas[v], row)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, &kgo.Record{Topic: "avro-in", Value: confluent(ids[v], body)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	job := fmt.Sprintf(`CREATE TABLE clicks (
  %s
) WITH (
  'connector' = 'kafka', 'topic' = 'avro-in', 'properties.bootstrap.servers' = '%s',
  'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
  'format' = 'avro-confluent', 'avro-confluent.url' = '%s'
);
CREATE TABLE out (
  click_id BIGINT NOT NULL, app STRING, user_id BIGINT, ts TIMESTAMP(3)
) WITH (
  'connector' = 'kafka', 'topic' = 'avro-out', 'properties.bootstrap.servers' = '%s',
  'format' = 'avro-confluent', 'avro-confluent.url' = '%s'
);
SET 'restart-strategy.type' = 'none';
INSERT INTO out SELECT click_id, UPPER(app_id), user_id, ts FROM clicks;
`, clickColumns, b.addr, reg.URL, b.addr, reg.URL)
	p := startEngine(t, filepath.Join(dir, "data"), writeFile(t, dir, "job.sql", job), nil)
	if err := p.Wait(); err != nil {
		t.Fatalf("the job failed: %v\n%s", err, p.Output())
	}

	// Read back what the sink wrote, with the schema its id names.
	subjects := registryGet(t, reg.URL+"/subjects")
	if !strings.Contains(subjects, `"avro-out-value"`) {
		t.Fatalf("the sink registered no subject avro-out-value: subjects %s", subjects)
	}
	seen := make([]bool, n+1)
	var writer avro.Schema
	var writerID uint32
	got := 0
	for _, v := range readValues(t, b, "avro-out") {
		if len(v) < 5 || v[0] != 0 {
			t.Fatalf("record %x is not in the Confluent wire format", v)
		}
		id := be.BigEndian.Uint32(v[1:5])
		if writer == nil {
			var s struct{ Schema string }
			if err := json.Unmarshal([]byte(registryGet(t, fmt.Sprintf("%s/schemas/ids/%d", reg.URL, id))), &s); err != nil {
				t.Fatal(err)
			}
			writer, writerID = avro.MustParse(s.Schema), id
		} else if id != writerID {
			t.Fatalf("records written with schema ids %d and %d", writerID, id)
		}
		var row struct {
			ClickID int64      `avro:"click_id"`
			App     *string    `avro:"app"`
			UserID  *int64     `avro:"user_id"`
			TS      *time.Time `avro:"ts"`
		}
		if err := avro.Unmarshal(writer, v[5:], &row); err != nil {
			t.Fatalf("decoding %x: %v", v, err)
		}
		id64 := row.ClickID
		if id64 < 1 || id64 > n || seen[id64] {
			t.Fatalf("click %d out of range or twice", id64)
		}
		seen[id64] = true
		got++
		wantApp := strings.ToUpper(appName(appOf(int(id64), apps)))
		if row.App == nil || *row.App != wantApp {
			t.Errorf("click %d: app %v, want %s", id64, row.App, wantApp)
		}
		if id64%10 == 0 && row.UserID != nil || id64%10 != 0 && (row.UserID == nil || *row.UserID != id64%100) {
			t.Errorf("click %d: user_id %v, want %d (NULL for every tenth)", id64, row.UserID, id64%100)
		}
		if wantTS := base.Add(time.Duration(id64) * time.Millisecond); row.TS == nil || !row.TS.Equal(wantTS) {
			t.Errorf("click %d: ts %v, want %v", id64, row.TS, wantTS)
		}
	}
	if got != n {
		t.Fatalf("read %d clicks from avro-out, want %d", got, n)
	}
	t.Logf("%d clicks through avro-confluent, writer schema ids %v in, %d out", n, ids, writerID)
}

// confluent frames an Avro body: a zero byte, the schema id, the body.
func confluent(id int, body []byte) []byte {
	out := []byte{0, 0, 0, 0, 0}
	be.BigEndian.PutUint32(out[1:], uint32(id))
	return append(out, body...)
}

// registerSchema registers an Avro schema under subject with the
// registry's REST API and returns its id.
func registerSchema(t *testing.T, url, subject, schema string) int {
	t.Helper()
	req, _ := json.Marshal(map[string]string{"schema": schema})
	resp, err := http.Post(url+"/subjects/"+subject+"/versions", "application/vnd.schemaregistry.v1+json", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out struct{ ID int }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil {
		t.Fatalf("registering under %s: %s %s", subject, resp.Status, body)
	}
	return out.ID
}

func registryGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", url, resp.Status, body)
	}
	return string(body)
}

// readValues reads the values of every committed record of topic.
func readValues(t *testing.T, b *broker, topic string) [][]byte {
	t.Helper()
	b.settle(t, topic)
	var ends int64
	for _, e := range endOffsets(t, b, topic) {
		ends += e
	}
	cl := kafkatest.Client(t, b.addr, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	var out [][]byte
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for int64(len(out)) < ends {
		f := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records of %s", len(out), ends, topic)
		}
		f.EachRecord(func(r *kgo.Record) { out = append(out, r.Value) })
	}
	return out
}
