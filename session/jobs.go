package session

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// ErrNoSuchJob is returned for a job id the session does not know.
var ErrNoSuchJob = errors.New("no such job")

// JobInfo describes a submitted job.
type JobInfo struct {
	ID, Name, Status  string
	Start             time.Time
	Duration          time.Duration
	RecordsIn, RecOut int64
	// Skipped counts bad records skipped ('json.ignore-parse-errors');
	// Late the records dropped for arriving behind the watermark;
	// LateRouted those written to the late-records table instead
	// ('table.exec.late-records.table').
	Skipped, Late, LateRouted int64
	// StateExpired counts the join rows and aggregate groups dropped by
	// their state TTL ('table.exec.state.ttl', the STATE_TTL hint).
	StateExpired int64
	// Tombstones counts the Kafka messages without a value that the plain
	// kafka source skipped (exec.Metrics.Tombstones). The sources keep
	// the count in their snapshots, so it is the latest attempt's, not a
	// sum over attempts.
	Tombstones int64
	// OpenWindows and WindowGroups are the state of the running attempt's
	// window aggregations (exec.Metrics): windows not fired yet, and their
	// (window, key) groups.
	OpenWindows, WindowGroups int64
	// JoinRows is the rows the running attempt's interval joins hold
	// (exec.Metrics.JoinRows).
	JoinRows int64
	// Watermark is the event time the job's output has reached
	// (exec.Metrics.Watermark; exec.NoWatermark when there is none).
	Watermark int64
	Restarts  int
	// RestoredFrom is the checkpoint the job started from (0: fresh).
	RestoredFrom int64
	// OwnerEpoch is the owner epoch this process claimed on the job's
	// checkpoints in an object store (checkpoint.Storage.Claim; 0 when
	// they are kept on disk).
	OwnerEpoch int64
	// Checkpoints are the statistics of its checkpoints (zero without).
	Checkpoints checkpoint.Stats
	// Err is why the job failed for good (Status FAILED), else nil.
	Err error
	// LastErr is the cause of the job's last failure, and LastFailure its
	// time, also while it restarts or runs again after a restart (nil and
	// zero without failures).
	LastErr     error
	LastFailure time.Time
	// Waiting is what the running attempt's sources wait for (a Kafka
	// topic not created yet; exec.Metrics.Waiting), nil when nothing.
	Waiting []string
}

// JobEventKind says what happened to a job.
type JobEventKind int

const (
	// JobFailed is an attempt of the job that failed: Err is the cause;
	// Final says the job is not restarted again, else Delay is the wait
	// before the restart.
	JobFailed JobEventKind = iota
	// JobRestarted is a restart that started: Checkpoint is the checkpoint
	// it restored (0: from the start).
	JobRestarted
	// JobWaiting is a running job whose sources began to wait for
	// something, or waits for something else now (Waiting), or no longer
	// waits (Waiting empty): a Kafka topic not created yet.
	JobWaiting
)

// JobEvent is a failure or restart of a job, as it happens (see
// Session.OnJobEvent).
type JobEvent struct {
	Kind     JobEventKind
	ID, Name string
	// Pos is where the statement that submitted the job starts.
	Pos   sql.Pos
	Time  time.Time
	Err   error
	Final bool
	Delay time.Duration
	// Restarts counts the job's restarts so far (with this one, for
	// JobRestarted).
	Restarts int
	// Repeated counts the failures in a row with this cause (JobFailed).
	Repeated   int
	Checkpoint int64
	// Waiting is what the job's sources wait for now (JobWaiting).
	Waiting []string
}

// MaxRepeatedFailures is how many failures in a row with the same cause
// (the same error text), with no checkpoint completed in between, fail a
// job for good whatever its restart strategy allows: such a failure is
// deterministic (a row that cannot be cast, a plan that cannot restore)
// and restarting cannot get past it.
const MaxRepeatedFailures = 10

// OnJobEvent makes fn receive every failure and restart of the session's
// jobs as it happens (`streamsql -f` prints them). fn is called from the
// jobs' supervisor goroutines and must not block; nil turns it off.
func (s *Session) OnJobEvent(fn func(JobEvent)) {
	s.jobs.mu.Lock()
	defer s.jobs.mu.Unlock()
	s.jobs.events = fn
}

// CheckpointEvent is a checkpoint or savepoint of a job that completed or
// failed (see Session.OnCheckpoint).
type CheckpointEvent struct {
	// JobID and JobName are the job's.
	JobID, JobName string
	checkpoint.Record
}

// OnCheckpoint makes fn receive every checkpoint and savepoint of the
// session's jobs, of every attempt, as it completes or fails (the server
// logs them). fn is called from the job's goroutines (the one that
// completed or failed the checkpoint) and must not block; nil turns it
// off.
func (s *Session) OnCheckpoint(fn func(CheckpointEvent)) {
	s.jobs.mu.Lock()
	defer s.jobs.mu.Unlock()
	s.jobs.checkpoints = fn
}

func (r *jobRegistry) emitCheckpoint(ev CheckpointEvent) {
	r.mu.Lock()
	fn := r.checkpoints
	r.mu.Unlock()
	if fn != nil {
		fn(ev)
	}
}

// jobEntry is one submitted job: a supervisor goroutine runs attempts of it
// (exec.Jobs), restarting from the latest completed checkpoint as the
// restart strategy allows.
type jobEntry struct {
	id, name string
	// folder is the job's folder under <data-dir>/jobs, which no other
	// running job shares (jobRegistry.claim).
	folder string
	// checkpointing is whether the job was submitted with checkpoints on.
	checkpointing bool
	// pos is where its statement starts, text the statement; graph is
	// its physical plan.
	pos   sql.Pos
	text  string
	graph *planner.Graph
	start time.Time
	done  chan struct{}
	// stopc is closed by stop: it ends a wait before a restart.
	stopc chan struct{}

	mu       sync.Mutex
	cur      *exec.Job
	stopped  bool
	restarts int
	restored int64
	// owner is the owner epoch claimed on the job's checkpoints in an
	// object store (0: none).
	owner   int64
	in, out int64 // records of finished attempts
	skipped int64
	late    int64
	// tombstones is the last ended attempt's count (restored from the
	// checkpoint by the next one).
	tombstones int64
	routed     int64
	expired    int64 // join rows and groups dropped by the state TTL, of finished attempts
	// watermark is the last ended attempt's (exec.Metrics.Watermark).
	watermark int64
	lastStats checkpoint.Stats
	// history is the checkpoint history of the ended attempts (at most
	// checkpoint.HistorySize, the newest).
	history []checkpoint.Record
	end     time.Time
	err     error
	// lastErr and lastFailure are the last failure's cause and time;
	// repeated counts the failures in a row with that cause.
	lastErr     error
	lastFailure time.Time
	repeated    int
	// restarting is set from a failure until the restart runs.
	restarting bool
	// prevSubtasks are the subtask counters of the ended attempts, summed
	// (JobDetail).
	prevSubtasks []exec.SubtaskMetrics
	// keep leaves the job's checkpoints in place when it is stopped
	// (StopWithCheckpoint).
	keep bool
	// savepointed is set when the job is stopped after its savepoint
	// completed: it ends FINISHED, as Flink's job stopped with a savepoint
	// does, not CANCELED.
	savepointed bool
}

func (e *jobEntry) attempt() *exec.Job {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur
}

// stop cancels the job and waits for its supervisor to end.
func (e *jobEntry) stop() {
	select {
	case <-e.done:
		return // already ended: keep its outcome
	default:
	}
	e.mu.Lock()
	if !e.stopped {
		e.stopped = true
		close(e.stopc)
	}
	cur := e.cur
	e.mu.Unlock()
	if cur != nil {
		cur.Cancel()
	}
	<-e.done
}

func (e *jobEntry) info() JobInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	info := JobInfo{ID: e.id, Name: e.name, Start: e.start, Restarts: e.restarts, RestoredFrom: e.restored, OwnerEpoch: e.owner,
		RecordsIn: e.in, RecOut: e.out, Skipped: e.skipped, Tombstones: e.tombstones, Late: e.late, LateRouted: e.routed, StateExpired: e.expired, Checkpoints: e.lastStats,
		Watermark: e.watermark, LastErr: e.lastErr, LastFailure: e.lastFailure}
	if e.cur != nil {
		m := e.cur.Metrics()
		info.RecordsIn += m.RecordsIn
		info.RecOut += m.RecordsOut
		info.Skipped += m.Skipped
		info.Tombstones = m.Tombstones
		info.Late += m.LateRecords
		info.LateRouted += m.LateRouted
		info.StateExpired += m.StateExpired
		info.OpenWindows, info.WindowGroups = m.OpenWindows, m.WindowGroups
		info.JoinRows = m.JoinRows
		info.Watermark = m.Watermark
		info.Waiting = m.Waiting
		if c := e.cur.Coordinator(); c != nil {
			info.Checkpoints.Durations.Buckets = append([]uint64(nil), info.Checkpoints.Durations.Buckets...)
			mergeStats(&info.Checkpoints, c.Stats())
		}
	}
	select {
	case <-e.done:
		switch {
		case e.savepointed && (e.stopped || e.err == nil):
			info.Status = "FINISHED"
		case e.stopped || errors.Is(e.err, exec.ErrStopped):
			info.Status = "CANCELED"
		case e.err != nil:
			info.Status, info.Err = "FAILED", e.err
		default:
			info.Status = "FINISHED"
		}
		info.Duration = e.end.Sub(e.start)
	default:
		info.Status = "RUNNING"
		if e.restarting {
			info.Status = "RESTARTING" // waiting before a restart, or restoring
		}
		info.Duration = time.Since(e.start)
	}
	return info
}

type jobRegistry struct {
	mu   sync.Mutex
	jobs []*jobEntry
	// claims are the job folders of the jobs submitted and not ended, and
	// the job (id, name) that holds each.
	claims      map[string][2]string
	events      func(JobEvent)
	checkpoints func(CheckpointEvent)
}

func newJobRegistry() *jobRegistry { return &jobRegistry{claims: map[string][2]string{}} }

// ErrJobRunning is returned for a job submitted under the name (or into
// the folder) of a job that is still running.
var ErrJobRunning = errors.New("a job of this name is running")

// claim reserves the job folder (and name) for job id until release; it
// fails when a job that has not ended holds either.
func (r *jobRegistry) claim(folder, id, name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for f, c := range r.claims {
		if f == folder || c[1] == name {
			return fmt.Errorf("%w: job '%s' (id %s)", ErrJobRunning, c[1], c[0])
		}
	}
	r.claims[folder] = [2]string{id, name}
	return nil
}

func (r *jobRegistry) release(folder string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.claims, folder)
}

func (r *jobRegistry) emit(ev JobEvent) {
	r.mu.Lock()
	fn := r.events
	r.mu.Unlock()
	if fn != nil {
		fn(ev)
	}
}

func (r *jobRegistry) add(e *jobEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = append(r.jobs, e)
}

func (r *jobRegistry) all() []*jobEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*jobEntry(nil), r.jobs...)
}

func (r *jobRegistry) find(id string) *jobEntry {
	for _, e := range r.all() {
		if e.id == id || e.name == id {
			return e
		}
	}
	return nil
}

func (r *jobRegistry) stopAll() {
	for _, e := range r.all() {
		e.stop()
	}
}

// jobColumns are the columns of SHOW JOBS: those that fit a terminal.
// DESCRIBE JOB 'id' shows every field of jobFields.
var jobColumns = []string{"job id", "job name", "status", "start time", "duration", "restarts", "owner epoch", "records in", "records out"}

// table is SHOW JOBS: one row a job, of the jobColumns.
func (r *jobRegistry) table() *Result {
	res := &Result{Kind: ResultRows}
	for i, e := range r.all() {
		fs := jobFields(e.info())
		byName := map[string]jobField{}
		for _, f := range fs {
			byName[f.name] = f
		}
		row := make([]types.Value, len(jobColumns))
		for k, c := range jobColumns {
			f := byName[c]
			if i == 0 {
				res.Columns = append(res.Columns, types.Column{Name: c, Type: f.typ})
			}
			row[k] = f.value
		}
		res.Rows = append(res.Rows, row)
	}
	if res.Columns == nil {
		for _, f := range jobFields(JobInfo{}) {
			for _, c := range jobColumns {
				if c == f.name {
					res.Columns = append(res.Columns, types.Column{Name: c, Type: f.typ})
				}
			}
		}
	}
	return res
}

// jobField is one figure of a job, as SHOW JOBS and DESCRIBE JOB show it.
type jobField struct {
	name  string
	typ   types.T
	value types.Value
}

// jobFields are every figure the session keeps of a job, in the order
// DESCRIBE JOB lists them.
func jobFields(j JobInfo) []jobField {
	// error: why the job failed for good, or else the cause of its last
	// failure (while it restarts, or runs again after a restart).
	var errText, cp, failedAt any
	if j.Err != nil {
		errText = j.Err.Error()
	} else if j.LastErr != nil {
		errText = j.LastErr.Error()
	}
	if !j.LastFailure.IsZero() {
		failedAt = j.LastFailure.Format("2006-01-02 15:04:05")
	}
	if c := j.Checkpoints; c.LastID > 0 {
		cp = fmt.Sprintf("#%d %s ago, took %s, %s (%s incremental)", c.LastID,
			time.Since(c.LastCompleted).Round(time.Second), c.LastDuration.Round(time.Millisecond),
			byteSize(c.LastSize), byteSize(c.LastIncremental))
	}
	status := j.Status
	if len(j.Waiting) > 0 && status == "RUNNING" {
		status += " (" + strings.Join(j.Waiting, "; ") + ")"
	}
	str := func(n string, v any) jobField { return jobField{n, types.StringType, v} }
	num := func(n string, v int64) jobField { return jobField{n, types.BigIntType, v} }
	// owner epoch: NULL for a job whose checkpoints are kept on disk.
	owner := jobField{"owner epoch", types.BigIntType, nil}
	if j.OwnerEpoch > 0 {
		owner.value = j.OwnerEpoch
	}
	return []jobField{
		str("job id", j.ID), str("job name", j.Name), str("status", status),
		str("start time", j.Start.Format("2006-01-02 15:04:05")),
		str("duration", j.Duration.Round(time.Millisecond).String()), num("restarts", int64(j.Restarts)),
		str("last checkpoint", cp), owner, num("records in", j.RecordsIn), num("records out", j.RecOut),
		num("skipped", j.Skipped), num("tombstones", j.Tombstones), num("late dropped", j.Late),
		num("late routed", j.LateRouted), num("state expired", j.StateExpired),
		str("watermark", watermarkText(j.Watermark)), str("last failure", failedAt), str("error", errText),
	}
}

// describeJob is DESCRIBE JOB 'id' (an id or a job name): every field of
// the job, one row each.
func (s *Session) describeJob(st *sql.DescribeJob) (*Result, error) {
	e := s.jobs.find(st.ID)
	if e == nil {
		return nil, &sql.Error{Pos: st.Pos(), Msg: fmt.Sprintf("%v '%s'", ErrNoSuchJob, st.ID), Hint: "SHOW JOBS lists the job ids"}
	}
	res := &Result{Kind: ResultRows, Columns: types.Schema{{Name: "field", Type: types.StringType}, {Name: "value", Type: types.StringType}}}
	for _, f := range jobFields(e.info()) {
		var v types.Value
		if f.value != nil {
			v = types.Format(f.typ, f.value)
		}
		res.Rows = append(res.Rows, []types.Value{f.name, v})
	}
	return res, nil
}

// watermarkText shows a job's watermark: a UTC time, "end of input", or
// NULL when its output has none (no event time, or none yet).
func watermarkText(wm int64) types.Value {
	switch wm {
	case exec.NoWatermark:
		return nil
	case math.MaxInt64:
		return "end of input"
	}
	return time.UnixMicro(wm).UTC().Format("2006-01-02 15:04:05.000")
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Jobs lists the session's jobs.
func (s *Session) Jobs() []JobInfo {
	var out []JobInfo
	for _, e := range s.jobs.all() {
		out = append(out, e.info())
	}
	return out
}

// WaitJobs waits until every job submitted so far has ended and returns the
// first failure. If ctx ends first, the running jobs are stopped.
func (s *Session) WaitJobs(ctx context.Context) error {
	var first error
	for _, e := range s.jobs.all() {
		select {
		case <-e.done:
		case <-ctx.Done():
			s.jobs.stopAll()
			return ctx.Err()
		}
		e.mu.Lock()
		err := e.err
		e.mu.Unlock()
		if err != nil && !errors.Is(err, exec.ErrStopped) && first == nil {
			first = fmt.Errorf("job %s (%s) failed: %w", e.id, e.name, err)
		}
	}
	return first
}

// StopJobs stops every running job.
func (s *Session) StopJobs() { s.jobs.stopAll() }

// StopJobsWithSavepoint takes a canonical savepoint of every running job, then stops
// it (a job whose savepoint failed keeps running). It returns the
// savepoint paths.
func (s *Session) StopJobsWithSavepoint(ctx context.Context) ([]string, error) {
	var paths []string
	var first error
	for _, e := range s.jobs.all() {
		select {
		case <-e.done:
			continue
		default:
		}
		p, err := s.savepointAndStop(ctx, e, checkpoint.FormatCanonical)
		if err != nil && first == nil {
			first = err
		}
		if p != "" {
			paths = append(paths, p)
		}
	}
	return paths, first
}

func (s *Session) savepointAndStop(ctx context.Context, e *jobEntry, f checkpoint.Format) (string, error) {
	if info := e.info(); info.Status != "RUNNING" && info.Status != "RESTARTING" {
		return "", fmt.Errorf("job %s (%s) has already ended (%s): no savepoint taken", e.id, e.name, info.Status)
	}
	cur := e.attempt()
	if cur == nil || cur.Coordinator() == nil {
		e.mu.Lock()
		cause := e.lastErr
		e.mu.Unlock()
		return "", fmt.Errorf("job %s (%s) is restarting after a failure (%v): a savepoint can be taken once it runs again (the job keeps restarting)",
			e.id, e.name, cause)
	}
	md, err := cur.Coordinator().StopWithSavepoint(ctx, f)
	if err != nil {
		return "", fmt.Errorf("savepoint of job %s failed (the job keeps running): %w", e.id, err)
	}
	defer s.discardStaged(e, md)
	// The sinks commit what the savepoint covers before the job stops, so
	// its output is visible even if the savepoint is never restored.
	if err := cur.WaitCommitted(ctx, md.ID); err != nil {
		return "", fmt.Errorf("job %s: %w", e.id, err)
	}
	root := s.Settings().SavepointDir
	if root == "" {
		root = s.path("savepoints")
	}
	path, err := s.writeSavepoint(ctx, md, root)
	if err != nil {
		return "", err
	}
	e.mu.Lock()
	e.savepointed = true
	e.mu.Unlock()
	e.stop()
	return path, nil
}

// writeSavepoint writes savepoint md under root, a directory or an object
// store location (reached with the session's 's3.*' options).
func (s *Session) writeSavepoint(ctx context.Context, md *checkpoint.Metadata, root string) (string, error) {
	cpo, err := checkpoint.ParseOptions(s.Options())
	if err != nil {
		return "", err
	}
	return checkpoint.WriteSavepointTo(ctx, md, root, cpo.S3)
}

// discardStaged removes savepoint md of a job without checkpointing from
// the job's folder, once copied to the savepoints directory (or not): such
// a job has no checkpoints there.
func (s *Session) discardStaged(e *jobEntry, md *checkpoint.Metadata) {
	if !e.checkpointing {
		checkpoint.NewStorage(s.path("jobs", e.folder, savepointStaging)).Discard(md.ID)
	}
}

func newJobID(name string, start time.Time) string {
	h := uint32(2166136261)
	for _, c := range []byte(fmt.Sprintf("%s/%d", name, start.UnixNano())) {
		h = (h ^ uint32(c)) * 16777619
	}
	return fmt.Sprintf("%08x", h)
}

// jobName is 'pipeline.name' or, by default, one derived from the
// statement: insert-into_<sink tables>-<hash of its normalized text>, so
// that the same statement run again resumes its own checkpoints while two
// different INSERTs into one table are two jobs. 'pipeline.name' stays set
// for the statements after it, as in Flink, until SET again or RESET.
func (s *Session) jobName(st sql.Statement, tables []string) (name string, explicit bool) {
	if n := s.Settings().PipelineName; n != "" {
		return n, true
	}
	h := fnv.New32a()
	h.Write([]byte(normalizeStatement(st.Text())))
	return fmt.Sprintf("insert-into_%s-%08x", strings.Join(tables, ","), h.Sum32()), false
}

// normalizeStatement is the text of a statement with its comments left out
// (optimizer hints /*+ ... */ kept), runs of white space made one space, and
// everything outside quotes in lower case: texts that differ only in those
// are the same statement.
func normalizeStatement(text string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(text) {
				if text[j] == c {
					if j+1 < len(text) && text[j+1] == c { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			j = min(j, len(text)-1)
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteString(text[i : j+1])
			i = j
			continue
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			space = true
			continue
		case c == '/' && i+1 < len(text) && text[i+1] == '*' && !(i+2 < len(text) && text[i+2] == '+'):
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				i = len(text)
			} else {
				i += 2 + end + 1
			}
			space = true
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// mergeStats adds an attempt's checkpoint statistics to those of the
// attempts before it: counts add up, the last checkpoint is the newer.
func mergeStats(dst *checkpoint.Stats, st checkpoint.Stats) {
	if st.LastID != 0 {
		dst.LastID, dst.LastCompleted, dst.LastDuration = st.LastID, st.LastCompleted, st.LastDuration
		dst.LastSize, dst.LastIncremental = st.LastSize, st.LastIncremental
	}
	dst.Completed += st.Completed
	dst.Failed += st.Failed
	dst.Durations.Add(st.Durations)
}

// appendHistory appends an attempt's checkpoint history, keeping the
// newest checkpoint.HistorySize records.
func appendHistory(h, more []checkpoint.Record) []checkpoint.Record {
	h = append(h, more...)
	if n := len(h) - checkpoint.HistorySize; n > 0 {
		h = append(h[:0:0], h[n:]...)
	}
	return h
}
