// Package session executes statements for one user: it owns the catalog of
// a data directory, the SET options, and the jobs submitted from it. The
// shell, `streamsql -f` and the sqllogictest runner all go through a
// Session, so a statement behaves the same from each door.
//
// It imports sql, catalog, planner and exec (and the connectors, for their
// registration); nothing imports it but cmd/streamsql and tests.
package session
