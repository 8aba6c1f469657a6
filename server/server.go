package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/internal/fsutil"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
)

// Options configure a Server. DataDir and HTTPAddr are required.
type Options struct {
	// DataDir is the data directory the server owns (locked until Close).
	DataDir string
	// HTTPAddr is where the API listens (host:port; port 0 picks one).
	HTTPAddr string
	// SavepointOnStop makes Shutdown stop the jobs with a savepoint, which
	// the next start restores; else with a final checkpoint.
	SavepointOnStop bool
	// Logger receives the server's log (log.go; default: text on
	// os.Stderr). NewLogger makes one.
	Logger *slog.Logger
	// Token, when set, is required of every request but GET /healthz, as
	// "Authorization: Bearer <Token>" (compared in constant time). It is
	// required when HTTPAddr is not a loopback address.
	Token string
	// TLSCert and TLSKey, both or neither, are PEM files: the API is then
	// served over HTTPS only.
	TLSCert, TLSKey string
	// AllowedPaths are the directories under which statements may name
	// files (session.SetAllowedPaths): a filesystem table's 'path', a
	// restore path, the savepoints directory. Default: DataDir.
	AllowedPaths []string
	// Pprof serves Go's profiles under /debug/pprof/ (default off: they
	// show the process's command line and let a client stall it).
	Pprof bool
	// ConfigFile is the configuration file whose options are the base of
	// the session every client's statements run in (session.ReadConfig):
	// a SET overrides one, a RESET returns to it. Default:
	// <DataDir>/config.yaml when it exists. A bad one stops Open.
	ConfigFile string
}

// TokenEnv is the environment variable the server and its clients take the
// token from when no --token-file is given.
const TokenEnv = "STREAMSQL_SERVER_TOKEN"

// ErrBadOptions is wrapped by Open's error for options it cannot run with.
var ErrBadOptions = errors.New("bad server options")

func (o *Options) validate() error {
	switch {
	case o.DataDir == "":
		return fmt.Errorf("%w: --data-dir is required", ErrBadOptions)
	case o.HTTPAddr == "":
		return fmt.Errorf("%w: --http is required", ErrBadOptions)
	case (o.TLSCert == "") != (o.TLSKey == ""):
		return fmt.Errorf("%w: --tls-cert and --tls-key go together", ErrBadOptions)
	case o.Token == "" && !IsLoopback(o.HTTPAddr):
		return fmt.Errorf("%w: --http %s is not a loopback address, and anyone who reaches it could run statements, read and write files as this process: give a token (--token-file FILE, or the environment variable %s) that clients must send, or listen on 127.0.0.1",
			ErrBadOptions, o.HTTPAddr, TokenEnv)
	}
	if o.Logger == nil {
		o.Logger, _ = NewLogger(os.Stderr, LogText)
	}
	return nil
}

// IsLoopback says whether addr (host:port) listens on a loopback address
// only: "localhost" or a loopback IP. An empty host (every interface), any
// other name or address is not.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Server runs jobs of one data directory and serves the API.
type Server struct {
	opts Options
	log  *slog.Logger
	sess *session.Session
	ln   net.Listener
	http *http.Server

	// stmtMu runs statements one at a time (the session's options are
	// shared by every client).
	stmtMu sync.Mutex

	mu sync.Mutex
	// running are the jobs submitted and not ended, as recorded in
	// <data-dir>/server/jobs.json for the next start.
	running      []runningJob
	shuttingDown bool
	metrics      *collector

	// base is the context of every request, canceled when Shutdown begins
	// so that a statement being planned or a query being streamed ends
	// instead of holding the shutdown.
	base       context.Context
	cancelBase context.CancelFunc

	// saveMu orders the writes of jobs.json, and is held by an untrack
	// from the job's removal until its write: an untrack that finds the
	// job already removed (its end and its stop through the API race), and
	// Shutdown, take it to wait until that removal is on disk.
	saveMu sync.Mutex
}

// runningJob is one job the server resumes when it starts again: the
// statement that submitted it and the session options then.
type runningJob struct {
	ID, Name  string
	Statement string
	Options   map[string]string
	// Savepoint, when set, is the savepoint it was stopped with, which the
	// next start restores ('execution.state-recovery.path').
	Savepoint string `json:",omitempty"`
}

func (s *Server) registryPath() string { return filepath.Join(s.opts.DataDir, "server", "jobs.json") }

// Open locks the data directory, resumes the jobs that were running when
// the server last stopped and starts listening. Serve then serves the API.
func Open(o Options) (*Server, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	sess, err := session.Open(o.DataDir)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, log: o.Logger, sess: sess}
	allowed := o.AllowedPaths
	if len(allowed) == 0 {
		allowed = []string{o.DataDir}
	}
	if err := sess.SetAllowedPaths(allowed); err != nil {
		sess.Close()
		return nil, fmt.Errorf("%w: --allowed-paths: %v", ErrBadOptions, err)
	}
	// The file is the base under what clients SET (options.json), and
	// under the jobs resumed below.
	read, err := sess.ReadConfig(o.ConfigFile)
	if err != nil {
		sess.Close()
		return nil, fmt.Errorf("%w: %v", ErrBadOptions, err)
	}
	if read != "" {
		s.log.Info("configuration read", "file", sess.ConfigFile())
	}
	s.metrics = newCollector(s)
	sess.OnJobEvent(s.jobEvent)
	sess.OnCheckpoint(s.checkpointEvent)
	if err := s.loadOptions(); err != nil {
		sess.Close()
		return nil, err
	}
	if err := s.resume(); err != nil {
		sess.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", o.HTTPAddr)
	if err != nil {
		sess.Close()
		return nil, err
	}
	s.ln = ln
	s.base, s.cancelBase = context.WithCancel(context.Background())
	s.http = &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return s.base }}
	scheme := "http"
	if o.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			ln.Close()
			sess.Close()
			return nil, fmt.Errorf("%w: --tls-cert %s, --tls-key %s: %v", ErrBadOptions, o.TLSCert, o.TLSKey, err)
		}
		s.ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		scheme = "https"
	}
	s.log.Info("server started", "url", scheme+"://"+ln.Addr().String(), "data_dir", o.DataDir,
		"token", o.Token != "", "pprof", o.Pprof, "allowed_paths", sess.AllowedPaths())
	return s, nil
}

// Addr is the address the API listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves the API until Shutdown; it returns nil after Shutdown.
func (s *Server) Serve() error {
	if err := s.http.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops the API and the jobs: with a savepoint each
// (Options.SavepointOnStop), else with a final checkpoint where the job
// has checkpointing; the next start resumes them. It releases the data dir.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shuttingDown = true
	s.mu.Unlock()
	s.saveMu.Lock() // an end being recorded is written first
	s.saveMu.Unlock()
	s.cancelBase()
	s.http.Shutdown(ctx)
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	var first error
	for _, j := range s.sess.Jobs() {
		if j.Status != "RUNNING" && j.Status != "RESTARTING" {
			continue
		}
		if s.opts.SavepointOnStop {
			path, err := s.sess.StopWithSavepoint(ctx, j.ID, checkpoint.FormatCanonical)
			if err != nil {
				s.log.Error("job stopped on shutdown", append(jobAttrs(j.ID, j.Name), "status", "CANCELED", "error", err.Error())...)
				first = cmpErr(first, err)
				continue
			}
			s.log.Info("job stopped on shutdown", append(jobAttrs(j.ID, j.Name), "status", "FINISHED", "savepoint", path)...)
			s.setSavepoint(j.ID, path)
			continue
		}
		id, err := s.sess.StopWithCheckpoint(ctx, j.ID)
		switch {
		case err != nil:
			s.log.Warn("job stopped on shutdown", append(jobAttrs(j.ID, j.Name), "status", "CANCELED",
				"error", "no final checkpoint: "+err.Error())...)
		default:
			s.log.Info("job stopped on shutdown", append(jobAttrs(j.ID, j.Name), "status", "CANCELED", "checkpoint", id)...)
		}
	}
	s.sess.StopJobs()
	s.log.Info("server stopped")
	return cmpErr(first, s.sess.Close())
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// resume submits again the jobs of the registry: each through the same
// path as `streamsql -f` run again, so that it resumes from its latest
// checkpoint in its job folder (jobs/<name>/checkpoints, with plan.json
// naming the plan that took them), or from the savepoint it was stopped
// with.
func (s *Server) resume() error {
	data, err := os.ReadFile(s.registryPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var jobs []runningJob
	if err := json.Unmarshal(data, &jobs); err != nil {
		return fmt.Errorf("%s: %w", s.registryPath(), err)
	}
	// What clients SET, put back once the jobs are resumed: not the
	// effective options, or the defaults and the configuration file's
	// values would become SETs.
	base := s.sess.SetOptions()
	for _, j := range jobs {
		// The savepoint it was stopped with, else its latest checkpoint:
		// never the path it was first restored from.
		opts := clone(j.Options)
		delete(opts, session.OptRecoveryPath)
		if j.Savepoint != "" {
			opts[session.OptRecoveryPath] = j.Savepoint
		}
		if err := s.sess.ReplaceOptions(opts); err != nil {
			s.log.Error("job not resumed", append(jobAttrs(j.ID, j.Name), "error", err.Error())...)
			continue
		}
		stmts, err := sql.Parse(j.Statement)
		if err == nil && len(stmts) != 1 {
			err = fmt.Errorf("%d statements", len(stmts))
		}
		if err != nil {
			s.log.Error("job not resumed", append(jobAttrs(j.ID, j.Name), "error", "its statement does not parse: "+err.Error())...)
			continue
		}
		r, err := s.sess.ExecuteStatement(context.Background(), stmts[0])
		if err != nil {
			s.log.Error("job not resumed", append(jobAttrs(j.ID, j.Name), "error", err.Error())...)
			continue
		}
		attrs := jobAttrs(r.JobID, j.Name)
		s.logNotes(r.Message, attrs...)
		info, _ := s.sess.JobDetail(r.JobID)
		attrs = append(attrs, "status", info.Status, "previous_job", j.ID)
		if info.OwnerEpoch > 0 {
			attrs = append(attrs, "owner_epoch", info.OwnerEpoch)
		}
		switch {
		case j.Savepoint != "":
			attrs = append(attrs, "from", "savepoint", "savepoint", j.Savepoint)
		case info.RestoredFrom > 0:
			attrs = append(attrs, "from", "checkpoint", "checkpoint", info.RestoredFrom)
		default:
			attrs = append(attrs, "from", "start")
		}
		s.log.Info("job resumed", append(attrs, "plan", filepath.Join(s.opts.DataDir, "jobs", session.JobFolder(j.Name), "plan.json"))...)
		s.track(runningJob{ID: r.JobID, Name: j.Name, Statement: j.Statement, Options: j.Options})
	}
	if err := s.sess.ReplaceOptions(base); err != nil {
		return err
	}
	return s.save()
}

func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func splitLines(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != '\n' {
			i++
		}
		if i > 0 {
			out = append(out, s[:i])
		}
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}

// track records a submitted job in the registry until it ends by itself
// (finished, failed, or stopped through the API); a job the server stops
// on shutdown stays recorded, to be resumed.
func (s *Server) track(j runningJob) {
	s.mu.Lock()
	s.running = append(s.running, j)
	s.mu.Unlock()
	if err := s.save(); err != nil {
		s.log.Error("recording the job for the next start failed", append(jobAttrs(j.ID, j.Name), "error", err.Error())...)
	}
	done := s.sess.JobDone(j.ID)
	go func() {
		<-done
		s.untrack(j.ID, true)
	}()
}

// untrack removes a job that ended from the registry, unless the server is
// shutting down (then it stays, to be resumed). onEnd logs its end.
func (s *Server) untrack(id string, onEnd bool) {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	if s.shuttingDown {
		s.mu.Unlock()
		return
	}
	found := false
	for i, r := range s.running {
		if r.ID == id {
			s.running = append(s.running[:i], s.running[i+1:]...)
			found = true
			break
		}
	}
	s.mu.Unlock()
	if !found {
		return
	}
	if onEnd {
		info, _ := s.sess.JobDetail(id)
		attrs := append(jobAttrs(id, info.Name), "status", info.Status)
		if info.Err != nil {
			attrs = append(attrs, "error", info.Err.Error())
		}
		s.log.Info("job ended", attrs...)
	}
	if err := s.saveLocked(); err != nil {
		s.log.Error("recording the end of the job failed", "job", id, "error", err.Error())
	}
}

func (s *Server) setSavepoint(id, path string) {
	s.mu.Lock()
	for i := range s.running {
		if s.running[i].ID == id {
			s.running[i].Savepoint = path
		}
	}
	s.mu.Unlock()
	if err := s.save(); err != nil {
		s.log.Error("recording the job's savepoint failed", "job", id, "savepoint", path, "error", err.Error())
	}
}

func (s *Server) save() error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	return s.saveLocked()
}

// saveLocked writes the registry as it is now; saveMu is held.
func (s *Server) saveLocked() error {
	s.mu.Lock()
	data, err := json.MarshalIndent(s.running, "", "  ")
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.registryPath()), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFileAtomic(s.registryPath(), append(data, '\n'))
}
