package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/streamsql/streamsql/internal/fsutil"
)

// optionsPath holds the options SET in the server's session
// (<data-dir>/server/options.json), so that a restarted server submits
// jobs with the options its clients SET before (checkpointing, say).
func (s *Server) optionsPath() string { return filepath.Join(s.opts.DataDir, "server", "options.json") }

// loadOptions SETs in the session the options saved by the last run. A
// file that cannot be read, or an option its value is refused for, is an
// error naming the file: the server does not start without them.
func (s *Server) loadOptions() error {
	data, err := os.ReadFile(s.optionsPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var opts map[string]string
	if err := json.Unmarshal(data, &opts); err != nil {
		return fmt.Errorf("%s: %w", s.optionsPath(), err)
	}
	if err := s.sess.ReplaceOptions(opts); err != nil {
		return fmt.Errorf("%s: the options SET before the server stopped: %w (RESET or SET them anew once it runs without this file)", s.optionsPath(), err)
	}
	if len(opts) > 0 {
		s.log.Info("session options restored", "options", len(opts), "file", s.optionsPath())
	}
	return nil
}

// saveOptionsIfChanged writes the session's options, atomically, when they
// differ from before (stmtMu held: a request's SETs and RESETs).
func (s *Server) saveOptionsIfChanged(before map[string]string) {
	now := s.sess.SetOptions()
	if maps.Equal(before, now) {
		return
	}
	data, err := json.MarshalIndent(now, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(s.optionsPath()), 0o755)
	}
	if err == nil {
		err = fsutil.WriteFileAtomic(s.optionsPath(), append(data, '\n'))
	}
	if err != nil {
		s.log.Error("recording the session's options for the next start failed", "file", s.optionsPath(), "error", err.Error())
	}
}
