// Package registry is how a connector package registers itself: its
// capabilities and its source and sink factories together, in the one
// connector registry (exec.RegisterConnector, kept in catalog), and how the
// connector tests build sources and sinks by name.
package registry
