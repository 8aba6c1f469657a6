package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/streamsql/streamsql/checkpoint"
)

// fileOptions are the table options, by connector, that name a file or
// directory the table reads or writes.
var fileOptions = map[string][]string{"filesystem": {"path"}}

// SetAllowedPaths restricts the files the session's statements may name to
// those under dirs (made absolute, symlinks resolved; each must exist):
// the 'path' of a filesystem table at CREATE TABLE, and the options
// 'execution.state-recovery.path' and 'state.savepoints.dir' when SET (and
// so the restore path a server request gives). A path is checked once
// cleaned, made absolute and with the symlinks of its longest existing
// prefix resolved, and may not contain "..": neither a symlink nor ".."
// leads out. Tables already in the catalog are not checked again. Without
// a call (the default) every path is allowed; `streamsql server` calls it
// (--allowed-paths). Call it before the session runs statements.
func (s *Session) SetAllowedPaths(dirs []string) error {
	if len(dirs) == 0 {
		return fmt.Errorf("no allowed directory given")
	}
	var out []string
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return fmt.Errorf("allowed directory %s: %w", d, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return fmt.Errorf("allowed directory %s: %w", d, err)
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return fmt.Errorf("allowed directory %s is not a directory", d)
		}
		out = append(out, real)
	}
	s.mu.Lock()
	s.allowed = out
	s.mu.Unlock()
	return nil
}

// AllowedPaths are the directories SetAllowedPaths set, resolved (nil:
// every path is allowed).
func (s *Session) AllowedPaths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.allowed)
}

// checkPathLocked says whether path, named by what (an option), lies under
// an allowed directory; s.mu is held.
func (s *Session) checkPathLocked(what, path string) error {
	if s.allowed == nil || path == "" || checkpoint.IsRemote(path) {
		// An object store location is no file of this machine.
		return nil
	}
	refuse := func(why string) error {
		return fmt.Errorf("path not allowed: %s = '%s'%s: this session may only read and write files under %s",
			what, path, why, strings.Join(s.allowed, ", "))
	}
	p := path
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		p = rest
	}
	for _, e := range strings.Split(filepath.ToSlash(p), "/") {
		if e == ".." {
			return refuse(` contains ".."`)
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return refuse(": " + err.Error())
	}
	real, err := resolveExisting(abs)
	if err != nil {
		return refuse(": " + err.Error())
	}
	for _, d := range s.allowed {
		if real == d || strings.HasPrefix(real, strings.TrimSuffix(d, string(filepath.Separator))+string(filepath.Separator)) {
			return nil
		}
	}
	if real != abs {
		return refuse(" (" + real + " once its symlinks are resolved)")
	}
	return refuse("")
}

// resolveExisting resolves the symlinks of the longest prefix of the
// clean absolute path p that exists, and appends the rest.
func resolveExisting(p string) (string, error) {
	rest := ""
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// checkTablePaths checks the options of a table that name files.
func (s *Session) checkTablePaths(connector string, opts map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range fileOptions[connector] {
		// Every spelling of the key: one the connector takes must not
		// slip past.
		for k, v := range opts {
			if strings.EqualFold(k, name) {
				if err := s.checkPathLocked("'"+k+"'", v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
