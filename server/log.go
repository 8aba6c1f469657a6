package server

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/session"
)

// The server's log is structured (log/slog): one record per event, with
// the message saying what happened and attributes saying to what. Records
// about a job carry "job" (its id) and "name"; those that change its state
// carry "status" (the status it is in after the event, as GET
// /api/v1/jobs says it). The events:
//
//	server started             url, data_dir
//	job submitted              job, name, status, owner_epoch?, statement
//	job resumed                job, name, status, previous_job, owner_epoch?, from (checkpoint|savepoint|start), checkpoint?, savepoint?, plan
//	job not resumed            job, name, error                                        (ERROR)
//	job failed                 job, name, status RESTARTING, error, restart, delay_ms  (WARN)
//	job failed                 job, name, status FAILED, error                         (ERROR)
//	job restarted              job, name, status RUNNING, restart, checkpoint (0: from the start)
//	job stopped                job, name, status CANCELED (FINISHED with a savepoint), savepoint?  (through the API)
//	job ended                  job, name, status FINISHED|CANCELED|FAILED, error?      (by itself, or STOP JOB)
//	checkpoint completed       job, name, checkpoint, savepoint, duration_ms, size_bytes, incremental_bytes, alignment_ms
//	checkpoint failed          job, name, checkpoint, savepoint, duration_ms, error     (WARN)
//	job stopped on shutdown    job, name, status FINISHED with a savepoint, else CANCELED; savepoint | checkpoint, or error (WARN)
//	server stopped
//
// Other messages (a resumed job's notes, such as a damaged checkpoint
// skipped) are logged as the session words them.

// Log formats (Options.LogFormat).
const (
	LogText = "text"
	LogJSON = "json"
)

// NewLogger returns the server's logger writing to w in format (LogText
// or LogJSON; "" is LogText).
func NewLogger(w io.Writer, format string) (*slog.Logger, error) {
	switch format {
	case "", LogText:
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case LogJSON:
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, fmt.Errorf("%w: --log-format %q: want %s or %s", ErrBadOptions, format, LogText, LogJSON)
}

func jobAttrs(id, name string) []any { return []any{"job", id, "name", name} }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// jobEvent logs a job's failure or restart.
func (s *Server) jobEvent(ev session.JobEvent) {
	attrs := jobAttrs(ev.ID, ev.Name)
	switch {
	case ev.Kind == session.JobWaiting && len(ev.Waiting) > 0:
		s.log.Info("job waits", append(attrs, "status", "RUNNING", "waiting", strings.Join(ev.Waiting, "; "))...)
	case ev.Kind == session.JobWaiting:
		s.log.Info("job no longer waits", append(attrs, "status", "RUNNING")...)
	case ev.Kind == session.JobRestarted:
		s.log.Info("job restarted", append(attrs, "status", "RUNNING", "restart", ev.Restarts, "checkpoint", ev.Checkpoint)...)
	case ev.Final:
		s.log.Error("job failed", append(attrs, "status", "FAILED", "error", ev.Err.Error())...)
	default:
		s.log.Warn("job failed", append(attrs, "status", "RESTARTING", "error", ev.Err.Error(),
			"restart", ev.Restarts+1, "delay_ms", ms(ev.Delay))...)
	}
}

// checkpointEvent logs a checkpoint or savepoint that completed or failed.
func (s *Server) checkpointEvent(ev session.CheckpointEvent) {
	attrs := append(jobAttrs(ev.JobID, ev.JobName), "checkpoint", ev.ID, "savepoint", ev.Savepoint, "duration_ms", ms(ev.Duration))
	if ev.Status == checkpoint.StatusCompleted {
		attrs = append(attrs, "acked_ms", ms(ev.Acked), "size_bytes", ev.Size, "incremental_bytes", ev.Incremental, "alignment_ms", ms(ev.Alignment))
		if ev.Uploaded > 0 {
			attrs = append(attrs, "uploaded_bytes", ev.Uploaded)
		}
		s.log.Info("checkpoint completed", attrs...)
		return
	}
	s.log.Warn("checkpoint failed", append(attrs, "error", ev.Failure)...)
}

// logNotes logs the notes of a statement's result (what it restored, a
// checkpoint it skipped), not the lines every submission prints.
func (s *Server) logNotes(message string, attrs ...any) {
	for _, line := range splitLines(message) {
		switch {
		case strings.HasPrefix(line, "[INFO] Submitting SQL"), strings.HasPrefix(line, "[INFO] SQL update statement"),
			strings.HasPrefix(line, "Job ID:"):
		case strings.Contains(line, "WARNING"):
			s.log.Warn(strings.TrimPrefix(line, "[INFO] "), attrs...)
		default:
			s.log.Info(strings.TrimPrefix(line, "[INFO] "), attrs...)
		}
	}
}
