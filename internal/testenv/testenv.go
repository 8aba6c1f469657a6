// Package testenv finds what tests need from the machine around the
// repository: the external conformance suites, which are run from where
// they are kept and never copied into the repository. It also holds what
// the end-to-end harnesses (tests/crash, tests/kafka) share: building the
// binary, seeded randomness, running the engine as a process (Proc) and
// listing what a check found wrong (Problems).
package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// ConformanceDir returns the directory of the external test suites: the
// environment variable STREAMSQL_CONFORMANCE, else the first shared/conformance
// found beside the working directory or one of its parents (the repository
// sits next to shared/ on development and CI machines). A test that needs
// the suites fails when they are missing, rather than skipping them.
func ConformanceDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("STREAMSQL_CONFORMANCE"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		c := filepath.Join(dir, "shared", "conformance")
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if st, err := os.Stat("/work/shared/conformance"); err == nil && st.IsDir() {
		return "/work/shared/conformance"
	}
	t.Fatal("the conformance suites (shared/conformance beside the repository) are missing; set STREAMSQL_CONFORMANCE to their directory")
	return ""
}
