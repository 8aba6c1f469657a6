// Package catalog owns the named objects a session sees: tables (their
// columns, computed columns kept as text, watermark, primary key and
// connector options) and views (their
// query text), kept on disk in the data directory so a restarted shell on the
// same directory sees them. It also owns the one connector registry: what
// each connector can do (read? write? bounded? accepts updates?) and which
// options it takes, so the planner can check a plan without importing
// connectors, and the runtime's factories of its sources and sinks (opaque
// here; exec.RegisterConnector fills them in).
//
// Of ours it imports types and internal/fsutil.
package catalog
