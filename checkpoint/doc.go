// Package checkpoint owns consistent snapshots of a running job (Flink's
// aligned-barrier checkpoints, Chandy-Lamport): the coordinator that
// triggers them and collects the subtasks' acknowledgements, the storage of
// completed checkpoints and savepoints with their atomically written
// _metadata, the lookup of the checkpoint to restore from (falling back past
// damaged ones), and restart strategies.
//
// The coordinator drives a job through the Job interface defined here; it
// never imports the runtime. Of ours it imports only internal/failpoint,
// internal/fsutil, internal/config, internal/objstore (checkpoints and
// savepoints kept in an object store: remote.go) and types.
package checkpoint
