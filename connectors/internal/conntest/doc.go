// Package conntest holds what the connector tests share: parsing a schema,
// options and rows written as text, and driving a source to its end. It is
// imported by tests only.
package conntest
