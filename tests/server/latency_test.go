package server

import (
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestLatencyMetrics: a job submitted with 'metrics.latency.interval' has a
// histogram of latency marker ages per operator subtask and source on
// /metrics (streamsql_operator_latency_seconds, labelled with the source
// operator's id, its ages positive), and the REST API's job detail shows
// them per operator; a job submitted without the option has none. A
// granularity that is not implemented is refused.
func TestLatencyMetrics(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	api := "http://" + addr + "/api/v1"
	srv := startServer(t, dir, addr)
	defer func() {
		srv.Signal(syscall.SIGTERM)
		srv.Wait()
	}()
	job := func(name string) string {
		return fmt.Sprintf(`CREATE TABLE %[1]s_src (k INT) WITH ('connector' = 'datagen', 'rows-per-second' = '2000',
  'fields.k.min' = '0', 'fields.k.max' = '9');
CREATE TABLE %[1]s_dst (k INT, n BIGINT) WITH ('connector' = 'blackhole');
SET 'parallelism.default' = '2';
INSERT INTO %[1]s_dst SELECT k, COUNT(*) FROM %[1]s_src GROUP BY k;
`, name)
	}
	marked := submit(t, api, "SET 'metrics.latency.interval' = '10 ms';\n"+job("marked"))
	plain := submit(t, api, "RESET 'metrics.latency.interval';\n"+job("plain"))

	const name = "streamsql_operator_latency_seconds"
	reaches(t, addr, name, map[string]string{"job": marked}, 20)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var detail struct {
		Plan struct {
			Operators []struct {
				ID, Name string
				Inputs   []any
				Latency  []struct {
					Source string
					Count  uint64
					P99MS  float64 `json:"p99_ms"`
					MaxMS  float64 `json:"max_ms"`
				}
			}
		}
	}
	getJSON(t, api+"/jobs/"+marked, &detail)
	var source string
	operators := map[string]bool{}
	for _, o := range detail.Plan.Operators {
		if len(o.Inputs) == 0 {
			source = o.ID
			if len(o.Latency) != 0 {
				t.Errorf("the source %s has latency %+v, want none", o.Name, o.Latency)
			}
			continue
		}
		operators[o.ID] = true
		if len(o.Latency) != 1 || o.Latency[0].Count == 0 || o.Latency[0].MaxMS <= 0 || o.Latency[0].P99MS > o.Latency[0].MaxMS {
			t.Errorf("%s: latency %+v in the job detail, want one source's markers with positive ages", o.Name, o.Latency)
		}
	}
	seen := map[string]bool{}
	for _, m := range fams[name].GetMetric() {
		l := map[string]string{}
		for _, p := range m.Label {
			l[p.GetName()] = p.GetValue()
		}
		switch l["job"] {
		case plain:
			t.Errorf("%s for the job without latency markers: %v", name, l)
		case marked:
			if l["source"] != source || !operators[l["operator"]] {
				t.Errorf("%s%v: want operator one of %v and source %s", name, l, operators, source)
			}
			if h := m.Histogram; h.GetSampleCount() > 0 && h.GetSampleSum() <= 0 {
				t.Errorf("%s%v: %d ages summing to %v, want positive ages", name, l, h.GetSampleCount(), h.GetSampleSum())
			}
			seen[l["operator"]] = true
		}
	}
	if len(seen) != len(operators) {
		t.Errorf("%s for operators %v, want every operator but the source: %v", name, seen, operators)
	}

	code, body := post(t, api+"/statements", fmt.Sprintf("SET 'metrics.latency.granularity' = '%s'", "subtask"))
	if code == 200 || !strings.Contains(fmt.Sprint(body), "not implemented") {
		t.Errorf("SET of granularity subtask: %d %v, want an error saying it is not implemented", code, body)
	}
}
