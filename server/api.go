package server

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/server/webui"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]string{"status": "ok"}) })
	mux.HandleFunc("GET /api/v1/jobs", s.listJobs)
	mux.HandleFunc("GET /api/v1/jobs/{id}", s.getJob)
	mux.HandleFunc("GET /api/v1/jobs/{id}/checkpoints", s.getCheckpoints)
	mux.HandleFunc("GET /api/v1/jobs/{id}/exceptions", s.getExceptions)
	mux.HandleFunc("POST /api/v1/jobs/{id}/stop", s.stopJob)
	mux.HandleFunc("POST /api/v1/jobs/{id}/savepoints", s.savepoint)
	mux.HandleFunc("POST /api/v1/statements", s.statements)
	mux.HandleFunc("POST /api/v1/queries", s.query)
	reg := prometheus.NewRegistry()
	reg.MustRegister(s.metrics)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if s.opts.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.Handle("GET /{$}", webui.Index())
	mux.Handle("GET "+webui.Prefix, webui.Assets())
	if s.opts.Token == "" {
		return mux
	}
	return requireToken(s.opts.Token, mux)
}

// requireToken passes on the requests that carry "Authorization: Bearer
// <token>", and GET /healthz; the others get 401.
func requireToken(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="streamsql"`)
			writeJSON(w, http.StatusUnauthorized, apiError{Error: "unauthorized: this server requires its token, sent as the header Authorization: Bearer <token> (streamsql --server takes it from --token-file or " + TokenEnv + ")"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// apiError is every error's body: the message the shell prints.
type apiError struct {
	Error string `json:"error"`
	// Line and Column place a statement's error (1-based; 0 unknown).
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	e := apiError{Error: capMessage(err.Error())}
	var se *sql.Error
	if errors.As(err, &se) {
		e.Line, e.Column = se.Pos.Line, se.Pos.Col
	}
	if errors.Is(err, session.ErrNoSuchJob) {
		code = http.StatusNotFound
	}
	writeJSON(w, code, e)
}

// MaxRequestBytes is the largest SQL text POST /api/v1/statements and POST
// /api/v1/queries take: a larger body is refused whole, with 413, before
// anything runs.
const MaxRequestBytes = 16 << 20

// drainBytes is how much more of a body over MaxRequestBytes is read (and
// dropped) before the 413 is sent, so that a client that writes its whole
// body before it reads the answer gets it; a body larger still is cut off.
const drainBytes = 64 << 20

// ErrTooLarge is the error of a request body over MaxRequestBytes.
var ErrTooLarge = fmt.Errorf("the request body is larger than %d MiB (%d bytes), the most a request takes", MaxRequestBytes>>20, MaxRequestBytes)

// readSQL reads the SQL text of a request's body, or writes the error and
// returns false: 413 for a body over MaxRequestBytes, refused whole.
func readSQL(w http.ResponseWriter, r *http.Request) (string, bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxRequestBytes+1))
	if err != nil {
		writeError(w, 400, err)
		return "", false
	}
	if len(body) > MaxRequestBytes {
		if r.ContentLength <= MaxRequestBytes+drainBytes {
			io.Copy(io.Discard, io.LimitReader(r.Body, drainBytes))
		}
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Errorf("%w: nothing was run; send the statements in several requests", ErrTooLarge))
		return "", false
	}
	return string(body), true
}

// maxLineBytes is the longest line of an error message the API sends: a
// message that quotes a whole statement or a huge value has each longer
// line cut, with an ellipsis and the count of bytes left out.
const maxLineBytes = 400

// capMessage cuts each line of msg longer than maxLineBytes (at a UTF-8
// boundary).
func capMessage(msg string) string {
	if len(msg) <= maxLineBytes {
		return msg
	}
	lines := strings.Split(msg, "\n")
	for i, l := range lines {
		if len(l) <= maxLineBytes {
			continue
		}
		cut := maxLineBytes
		for cut > 0 && !utf8.RuneStart(l[cut]) {
			cut--
		}
		lines[i] = fmt.Sprintf("%s… (%d bytes more)", l[:cut], len(l)-cut)
	}
	return strings.Join(lines, "\n")
}

// jobSummary is a job in GET /api/v1/jobs.
type jobSummary struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	Status       string    `json:"status"`
	Start        time.Time `json:"start_time"`
	DurationMs   int64     `json:"duration_ms"`
	Restarts     int       `json:"restarts"`
	RestoredFrom int64     `json:"restored_from_checkpoint"`
	// OwnerEpoch is the owner epoch this server claimed on the job's
	// checkpoints in an object store, absent when they are kept on disk.
	OwnerEpoch  int64 `json:"owner_epoch,omitempty"`
	RecordsIn   int64 `json:"records_in"`
	RecordsOut  int64 `json:"records_out"`
	LateDropped int64 `json:"late_dropped"`
	LateRouted  int64 `json:"late_routed"`
	// Watermark is the output's event time (RFC 3339), absent without one.
	Watermark string `json:"watermark,omitempty"`
	Error     string `json:"error,omitempty"`
	// Waiting is what a running job's sources wait for (a Kafka topic not
	// created yet), absent when nothing.
	Waiting []string `json:"waiting,omitempty"`
}

func summary(j session.JobInfo) jobSummary {
	s := jobSummary{ID: j.ID, Name: j.Name, Status: j.Status, Start: j.Start, DurationMs: j.Duration.Milliseconds(),
		Restarts: j.Restarts, RestoredFrom: j.RestoredFrom, OwnerEpoch: j.OwnerEpoch, RecordsIn: j.RecordsIn, RecordsOut: j.RecOut,
		LateDropped: j.Late, LateRouted: j.LateRouted, Watermark: watermarkText(j.Watermark), Waiting: j.Waiting}
	if j.Err != nil {
		s.Error = j.Err.Error()
	}
	return s
}

func watermarkText(wm int64) string {
	switch wm {
	case exec.NoWatermark:
		return ""
	case math.MaxInt64:
		return "end of input"
	}
	return time.UnixMicro(wm).UTC().Format(time.RFC3339Nano)
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) {
	out := []jobSummary{}
	for _, j := range s.sess.Jobs() {
		out = append(out, summary(j))
	}
	writeJSON(w, 200, map[string]any{"jobs": out})
}

type subtaskJSON struct {
	Subtask        int     `json:"subtask"`
	RecordsIn      int64   `json:"records_in"`
	RecordsOut     int64   `json:"records_out"`
	BusySeconds    float64 `json:"busy_seconds"`
	BackpressuredS float64 `json:"backpressured_seconds"`
	Watermark      string  `json:"watermark,omitempty"`
	StateEntries   *int64  `json:"state_entries,omitempty"`
	StateBytes     *int64  `json:"state_memory_bytes,omitempty"`
	// KafkaLag is a Kafka source's lag per partition.
	KafkaLag []lagJSON `json:"kafka_lag,omitempty"`
	// Latency are the ages of the latency markers that reached the subtask,
	// per source operator ('metrics.latency.interval').
	Latency []latencyJSON `json:"latency,omitempty"`
}

// latencyJSON summarizes a histogram of latency marker ages; the
// quantiles are estimated from its buckets (exec.LatencyHistogram.Quantile).
type latencyJSON struct {
	Source string  `json:"source"`
	Count  uint64  `json:"count"`
	MeanMS float64 `json:"mean_ms"`
	P50MS  float64 `json:"p50_ms"`
	P99MS  float64 `json:"p99_ms"`
	P999MS float64 `json:"p999_ms"`
	MaxMS  float64 `json:"max_ms"`
}

func latencyOf(hs []exec.LatencyHistogram) []latencyJSON {
	var out []latencyJSON
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for _, h := range hs {
		out = append(out, latencyJSON{Source: h.Source, Count: h.Count, MeanMS: ms(h.Mean()), P50MS: ms(h.Quantile(0.5)),
			P99MS: ms(h.Quantile(0.99)), P999MS: ms(h.Quantile(0.999)), MaxMS: ms(h.Max)})
	}
	return out
}

type lagJSON struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Records   int64  `json:"records"`
}

type operatorJSON struct {
	ID          string                `json:"id"`
	Name        string                `json:"name"`
	Parallelism int                   `json:"parallelism"`
	Inputs      []session.InputDetail `json:"inputs"`
	Subtasks    []subtaskJSON         `json:"subtasks"`
	// Latency is Subtasks' latency added over the subtasks.
	Latency []latencyJSON `json:"latency,omitempty"`
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) {
	d, err := s.sess.JobDetail(r.PathValue("id"))
	if err != nil {
		writeError(w, 404, err)
		return
	}
	ops := []operatorJSON{}
	for _, o := range d.Operators {
		oj := operatorJSON{ID: o.ID, Name: o.Name, Parallelism: o.Parallelism, Inputs: o.Inputs, Latency: latencyOf(o.Latency)}
		for _, m := range o.Subtasks {
			sj := subtaskJSON{Subtask: m.Subtask, RecordsIn: m.RecordsIn, RecordsOut: m.RecordsOut,
				BusySeconds: m.Busy.Seconds(), BackpressuredS: m.Backpressured.Seconds(), Watermark: watermarkText(m.Watermark),
				Latency: latencyOf(m.Latency)}
			if m.StateEntries >= 0 {
				v := m.StateEntries
				sj.StateEntries = &v
			}
			if m.StateBytes >= 0 {
				v := m.StateBytes
				sj.StateBytes = &v
			}
			for _, p := range m.Lag {
				sj.KafkaLag = append(sj.KafkaLag, lagJSON{Topic: p.Topic, Partition: p.Partition, Records: p.Records})
			}
			oj.Subtasks = append(oj.Subtasks, sj)
		}
		ops = append(ops, oj)
	}
	writeJSON(w, 200, map[string]any{"job": summary(d.JobInfo), "statement": d.Statement, "plan": map[string]any{"operators": ops}})
}

func (s *Server) getCheckpoints(w http.ResponseWriter, r *http.Request) {
	d, err := s.sess.JobDetail(r.PathValue("id"))
	if err != nil {
		writeError(w, 404, err)
		return
	}
	c := d.Checkpoints
	out := map[string]any{"counts": map[string]int{"completed": c.Completed, "failed": c.Failed}, "restored": d.RestoredFrom}
	if c.LastID > 0 {
		out["latest"] = map[string]any{"id": c.LastID, "status": checkpoint.StatusCompleted, "completed_at": c.LastCompleted,
			"duration_ms": c.LastDuration.Milliseconds(), "size_bytes": c.LastSize, "incremental_bytes": c.LastIncremental}
	}
	history := make([]map[string]any, 0, len(d.CheckpointHistory))
	for _, r := range d.CheckpointHistory {
		h := map[string]any{"id": r.ID, "status": r.Status, "savepoint": r.Savepoint, "trigger_time": r.Triggered,
			"duration_ms": r.Duration.Milliseconds(), "alignment_ms": float64(r.Alignment.Microseconds()) / 1000}
		if r.Status == checkpoint.StatusCompleted {
			h["size_bytes"], h["incremental_bytes"], h["acked_ms"] = r.Size, r.Incremental, r.Acked.Milliseconds()
			if d.OwnerEpoch > 0 { // checkpoints in an object store
				h["uploaded_bytes"] = r.Uploaded
			}
		} else {
			h["failure"] = r.Failure
		}
		history = append(history, h)
	}
	out["history"] = history
	writeJSON(w, 200, out)
}

func (s *Server) getExceptions(w http.ResponseWriter, r *http.Request) {
	d, err := s.sess.JobDetail(r.PathValue("id"))
	if err != nil {
		writeError(w, 404, err)
		return
	}
	out := []map[string]any{}
	if d.LastErr != nil {
		out = append(out, map[string]any{"time": d.LastFailure, "message": d.LastErr.Error(), "final": false})
	}
	if d.Err != nil {
		out = append(out, map[string]any{"time": d.Start.Add(d.Duration), "message": d.Err.Error(), "final": true})
	}
	writeJSON(w, 200, map[string]any{"exceptions": out})
}

func (s *Server) stopJob(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	withSavepoint := r.URL.Query().Get("savepoint") == "true"
	format, err := savepointFormat(r, withSavepoint)
	if err != nil {
		writeError(w, 400, err)
		return
	}
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if withSavepoint {
		path, err := s.sess.StopWithSavepoint(r.Context(), id, format)
		if err != nil {
			writeError(w, 409, err)
			return
		}
		// FINISHED, as Flink's job stopped with a savepoint ends.
		d, _ := s.sess.JobDetail(id)
		s.log.Info("job stopped", append(jobAttrs(id, d.Name), "status", d.Status, "savepoint", path)...)
		s.untrack(id, false)
		writeJSON(w, 200, map[string]any{"status": d.Status, "savepoint": path})
		return
	}
	d, err := s.sess.JobDetail(id)
	if err != nil {
		writeError(w, 404, err)
		return
	}
	text := fmt.Sprintf("STOP JOB '%s'", id)
	if _, err := s.sess.Execute(r.Context(), text); err != nil {
		writeError(w, 409, err)
		return
	}
	s.log.Info("job stopped", append(jobAttrs(id, d.Name), "status", "CANCELED")...)
	s.untrack(id, false)
	writeJSON(w, 200, map[string]any{"status": "CANCELED"})
}

// savepointFormat is the request's formatType (Flink's name: CANONICAL,
// the default, or NATIVE); one given without a savepoint is an error.
func savepointFormat(r *http.Request, withSavepoint bool) (checkpoint.Format, error) {
	v, given := r.URL.Query()["formatType"]
	if !given {
		return checkpoint.FormatCanonical, nil
	}
	if !withSavepoint {
		return "", errors.New("formatType is the format of a savepoint: give it with savepoint=true")
	}
	f, err := checkpoint.ParseFormat(v[0])
	if err != nil || v[0] == "" {
		return "", fmt.Errorf("formatType: unknown savepoint format '%s' (CANONICAL or NATIVE)", v[0])
	}
	return f, nil
}

func (s *Server) savepoint(w http.ResponseWriter, r *http.Request) {
	format, err := savepointFormat(r, true)
	if err != nil {
		writeError(w, 400, err)
		return
	}
	path, err := s.sess.Savepoint(r.Context(), r.PathValue("id"), format)
	if err != nil {
		writeError(w, 409, err)
		return
	}
	writeJSON(w, 200, map[string]any{"savepoint": path})
}

// resultJSON is one statement's result.
type resultJSON struct {
	// Kind is "ok", "rows", "text" or "job".
	Kind    string       `json:"kind"`
	Message string       `json:"message,omitempty"`
	Columns []columnJSON `json:"columns,omitempty"`
	// Rows hold each value as the shell prints it (null for NULL).
	Rows  [][]*string `json:"rows,omitempty"`
	Text  string      `json:"text,omitempty"`
	JobID string      `json:"job_id,omitempty"`
}

type columnJSON struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// statements runs the SQL text of the body, statement by statement; the
// first error ends it (the results so far come with it).
func (s *Server) statements(w http.ResponseWriter, r *http.Request) {
	body, ok := readSQL(w, r)
	if !ok {
		return
	}
	stmts, err := sql.Parse(body)
	if err != nil {
		writeError(w, 400, err)
		return
	}
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	// What the statements SET or RESET is kept for the next start (after
	// the restore below is set back).
	defer s.saveOptionsIfChanged(s.sess.SetOptions())
	// restore is the first job's only (-s): it is set back once a
	// statement submitted a job, and at the end of the request.
	var undoRestore func()
	if path := r.URL.Query().Get("restore"); path != "" {
		undo, err := s.setForRequest(session.OptRecoveryPath, path)
		if err != nil {
			writeError(w, 400, err)
			return
		}
		undoRestore = undo
		defer func() {
			if undoRestore != nil {
				undoRestore()
			}
		}()
	}
	results := []resultJSON{}
	for _, st := range stmts {
		res, err := s.sess.ExecuteStatement(r.Context(), st)
		if err != nil {
			e := apiError{Error: capMessage(err.Error())}
			var se *sql.Error
			if errors.As(err, &se) {
				e.Line, e.Column = se.Pos.Line, se.Pos.Col
			}
			writeJSON(w, 400, map[string]any{"error": e.Error, "line": e.Line, "column": e.Column, "results": results})
			return
		}
		rj := resultJSON{Message: res.Message, Text: res.Text, JobID: res.JobID}
		switch res.Kind {
		case session.ResultOK:
			rj.Kind = "ok"
		case session.ResultText:
			rj.Kind = "text"
		case session.ResultJob:
			rj.Kind = "job"
			if undoRestore != nil {
				undoRestore()
				undoRestore = nil
			}
			d, err := s.sess.JobDetail(res.JobID)
			if err != nil {
				break
			}
			attrs := jobAttrs(res.JobID, d.Name)
			s.logNotes(res.Message, attrs...)
			attrs = append(attrs, "status", d.Status)
			if d.OwnerEpoch > 0 {
				attrs = append(attrs, "owner_epoch", d.OwnerEpoch)
			}
			s.log.Info("job submitted", append(attrs, "statement", oneLine(st.Text()))...)
			if d.Status != "FINISHED" && d.Status != "FAILED" {
				s.track(runningJob{ID: res.JobID, Name: d.Name, Statement: st.Text(), Options: s.sess.SetOptions()})
			}
		case session.ResultRows:
			rj.Kind = "rows"
			for _, c := range res.Columns {
				rj.Columns = append(rj.Columns, columnJSON{Name: c.Name, Type: c.Type.String()})
			}
			rj.Rows = [][]*string{}
			for _, row := range res.Rows {
				out := make([]*string, len(row))
				for i, v := range row {
					if v != nil {
						t := types.Format(res.Columns[i].Type, v)
						out[i] = &t
					}
				}
				rj.Rows = append(rj.Rows, out)
			}
		}
		results = append(results, rj)
	}
	writeJSON(w, 200, map[string]any{"results": results})
}

// setForRequest SETs key to value for the statements of one request
// (stmtMu held) and returns the function that puts back what was SET
// before, whatever the statements SET meanwhile under other keys.
func (s *Server) setForRequest(key, value string) (undo func(), err error) {
	before, had := s.sess.SetOptions()[key]
	opts := clone(s.sess.SetOptions())
	opts[key] = value
	if err := s.sess.ReplaceOptions(opts); err != nil {
		return nil, err
	}
	return func() {
		opts := clone(s.sess.SetOptions())
		delete(opts, key)
		if had {
			opts[key] = before
		}
		if err := s.sess.ReplaceOptions(opts); err != nil {
			s.log.Error("setting an option back after a request failed", "option", key, "error", err.Error())
		}
	}, nil
}

func oneLine(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\n' || c == '\t' {
			b[i] = ' '
		}
	}
	return string(b)
}
