// Package server is the long-running streamsql process (`streamsql
// server`): one session on one data directory, the jobs submitted to it,
// and the HTTP API that drives and watches them (docs/API.md).
//
// # Lifecycle
//
// Open validates the Options, takes the data directory's lock (through
// session.Open: a second server or shell on the directory is refused,
// naming the owner), SETs again the session options kept in
// <data-dir>/server/options.json (written atomically whenever a request's
// SET or RESET changed them), resumes the jobs recorded in
// <data-dir>/server/jobs.json and starts listening; an error from Open
// leaves nothing open and the lock released. Serve then serves the API
// until Shutdown, which cancels the requests in flight (a statement being
// planned, a query being streamed), stops the API, stops every running job
// (with a savepoint each when Options.SavepointOnStop, else with a final
// checkpoint where the job has checkpointing), closes the session and
// releases the lock. A Server is used once: Open, Serve, Shutdown.
//
// # The registry of running jobs
//
// A job is recorded in jobs.json (statement and the options SET when it was
// submitted, written atomically) from its submission until it ends by
// itself (finished or failed for good) or is stopped through the API. A job
// stopped by Shutdown, or left running by a process that died (kill -9),
// stays recorded, and the next Open submits its statement again through
// the path `streamsql -f` takes for a file run again: same name, same job
// folder, so it restores its latest checkpoint there, or the savepoint it
// was stopped with. A job whose statement no longer plans is logged, not
// resumed and dropped from the registry; the others are resumed.
//
// # Concurrency
//
// Every method of Server and every handler is safe to call from any
// goroutine. Statements (POST /api/v1/statements, and the stops through the
// API) run one at a time in the server's one session, so a SET holds for
// every client after it; reads (the job list, a job's detail, checkpoints,
// exceptions, /metrics) do not wait for a statement and read the jobs'
// snapshots. A query (POST /api/v1/queries) is planned in that order and
// then runs outside it, streaming its changes to its client until its input
// ends or the client goes away. Job events (failures, restarts) arrive on the jobs'
// supervisor goroutines and are only logged there.
//
// # Metrics
//
// /metrics is read from the jobs' snapshots at scrape time
// (session.JobDetail, exec.Job.SubtaskMetrics: atomics each subtask adds to
// once per batch), so the jobs do no work per row for it and a scrape costs
// them nothing. Counters are summed over a job's restarts and never go back.
//
// # Log
//
// Options.Logger (log/slog; NewLogger makes a text or JSON one) receives a
// record per event: job submissions, state changes, every checkpoint and
// savepoint that completed or failed (session.OnCheckpoint), failures with
// their causes and restarts (session.OnJobEvent). log.go lists them.
//
// # Security
//
// Open refuses a non-loopback Options.HTTPAddr without Options.Token; with
// a token every request but GET /healthz must carry it as a Bearer header
// (401 otherwise, compared in constant time). Options.TLSCert/TLSKey serve
// HTTPS only; /debug/pprof/ is served only with Options.Pprof. The
// session's statements may name files only under Options.AllowedPaths
// (default: the data directory), checked by session.SetAllowedPaths.
//
// # Errors
//
// Every error of the API is JSON {"error": message} with the message the
// shell prints; a statement's error adds its line and column. An unknown
// job id is 404, a stop or savepoint that cannot be taken 409, an unknown
// savepoint formatType (CANONICAL or NATIVE, as Flink's) 400.
package server
