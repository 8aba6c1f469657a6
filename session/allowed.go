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
// 'execution.state-recovery.path', 'state.savepoints.dir' and
// 'execution.checkpointing.dir' whenever they change (SET, and so the
// restore path a server request gives; the configuration file). A path is
// checked once cleaned, made absolute and with the symlinks of its longest
// existing prefix resolved, and may not contain "..": neither a symlink
// nor ".." leads out. Tables already in the catalog are not checked again.
//
// An object store location among dirs (s3://bucket/prefix) allows the
// locations under it (checkpoint.RemoteUnder); with none, every object
// store location is refused. And the options that say which object store
// and as whom (s3.endpoint, s3.path.style.access, s3.access-key,
// s3.secret-key) may not be SET: a client could otherwise send the
// state to a server of its own under an allowed bucket's name; they come
// from the configuration file or the AWS environment.
//
// Without a call (the default) every path is allowed; `streamsql server`
// calls it (--allowed-paths). Call it before the session runs statements.
func (s *Session) SetAllowedPaths(dirs []string) error {
	if len(dirs) == 0 {
		return fmt.Errorf("no allowed directory given")
	}
	var out, remote []string
	for _, d := range dirs {
		if checkpoint.IsRemote(d) {
			if !checkpoint.ValidLocation(d) || !strings.HasPrefix(strings.ToLower(d), "s3") {
				return fmt.Errorf("allowed location %s: want s3://bucket[/prefix] (a prefix without empty, '.' or '..' elements)", d)
			}
			remote = append(remote, strings.TrimRight(d, "/"))
			continue
		}
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
	s.allowed, s.allowedRemote, s.restricted = out, remote, true
	s.mu.Unlock()
	return nil
}

// AllowedPaths are the directories SetAllowedPaths set, resolved, then its
// object store locations (nil: every path is allowed).
func (s *Session) AllowedPaths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.restricted {
		return nil
	}
	return append(slices.Clone(s.allowed), s.allowedRemote...)
}

// objectStoreOptions are the options a session restricted to allowed paths
// does not let SET (SetAllowedPaths).
var objectStoreOptions = []string{checkpoint.KeyS3Endpoint, checkpoint.KeyS3PathStyle, checkpoint.KeyS3AccessKey, checkpoint.KeyS3SecretKey}

// checkSetLocked refuses a SET of key in a session restricted to allowed
// paths when key says which object store, or as whom; s.mu is held.
func (s *Session) checkSetLocked(key string) error {
	if s.restricted && slices.Contains(objectStoreOptions, strings.ToLower(key)) {
		return fmt.Errorf("'%s' may not be SET in this session: it may only read and write under %s, and which object store it reaches, and as whom, "+
			"comes from the configuration file or the AWS environment", key, s.allowedText())
	}
	return nil
}

// allowedText lists the allowed directories and object store locations.
func (s *Session) allowedText() string {
	return strings.Join(append(slices.Clone(s.allowed), s.allowedRemote...), ", ")
}

// checkPathLocked says whether path, named by what (an option), lies under
// an allowed directory; s.mu is held.
func (s *Session) checkPathLocked(what, path string) error {
	if !s.restricted || path == "" {
		return nil
	}
	if checkpoint.IsRemote(path) {
		for _, d := range s.allowedRemote {
			in, err := checkpoint.RemoteUnder(path, d)
			if err != nil {
				return fmt.Errorf("path not allowed: %s = '%s': %v", what, path, err)
			}
			if in {
				return nil
			}
		}
		if len(s.allowedRemote) == 0 {
			return fmt.Errorf("path not allowed: %s = '%s': this session may only read and write files under %s, and no object store location "+
				"(a server allows one with --allowed-paths s3://bucket/prefix)", what, path, strings.Join(s.allowed, ", "))
		}
		return fmt.Errorf("path not allowed: %s = '%s': this session may only read and write under %s", what, path, s.allowedText())
	}
	refuse := func(why string) error {
		return fmt.Errorf("path not allowed: %s = '%s'%s: this session may only read and write files under %s",
			what, path, why, s.allowedText())
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
