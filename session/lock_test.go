package session

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/streamsql/streamsql/internal/datadir"
)

// TestOpenLocksTheDataDir checks that a data directory has one session at a
// time: a second Open fails naming the owner until the first is closed.
func TestOpenLocksTheDataDir(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir)
	if !errors.Is(err, datadir.ErrLocked) || !strings.Contains(err.Error(), "in use by process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("a second Open of an open data directory: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s.Close()
	// Sessions without a data directory share nothing and lock nothing.
	a, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
}
