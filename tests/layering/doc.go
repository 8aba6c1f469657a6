// Package layering checks that the packages of the repository import what
// docs/DESIGN.md's package table says they may import, and nothing more,
// and that go.mod and go.sum are tidy.
package layering
