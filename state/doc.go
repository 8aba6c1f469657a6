// Package state owns operators' keyed state: the Store contract every
// backend implements, the in-memory backend, key groups (how a key maps to
// the unit of state that moves when a job is rescaled, as in Flink), and
// the write-back Cache operators read and write through, so that a backend
// is touched once per key per checkpoint, never once per record.
//
// It imports nothing of streamsql's.
package state
