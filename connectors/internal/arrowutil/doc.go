// Package arrowutil holds the Arrow helpers the connectors share: deep
// copies of batches a sink keeps, projection of a stored batch onto the
// columns a scan reads, and batches built from Go values (tests).
package arrowutil
