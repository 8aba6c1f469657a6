// Package sqllogic holds streamsql's own sqllogictest suites, one .slt file
// per feature under testdata/, and the Go test that runs them through the
// same runner as `streamsql test`.
package sqllogic
