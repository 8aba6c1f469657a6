package session

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/streamsql/streamsql/internal/config"
)

// ConfigFileName is the configuration file a session reads from its data
// directory when no other is named (ReadConfig).
const ConfigFileName = "config.yaml"

// Where an option's value comes from, as SET with no arguments lists it:
// the definition's (or the session's SetDefault) default, a SET, or the
// configuration file (its path and the line, "/etc/streamsql.yaml:3").
const (
	sourceDefault = "default"
	sourceSET     = "SET"
)

// ReadConfig reads the configuration file at path (Flink 2's config.yaml
// layout: config.ParseYAML) and makes its options the session's base:
// what they are until SET, and again after RESET. An empty path reads
// <data-dir>/config.yaml when it exists (nothing when it does not, or for
// an in-memory session); a path named but absent is an error. It returns
// the path read ("" when none).
//
// Every key and value is checked as SET checks them, with SET's message,
// placed at the file and line ("config.yaml:12: option 'x' must be ...",
// a *config.FileError): an unknown key, a value the option does not take,
// or one option given twice (under two of its names, say) is an error, and
// then nothing of the file is applied. It is called once, after Open and
// before any statement; a second call is an error.
func (s *Session) ReadConfig(path string) (string, error) {
	if path == "" {
		if s.dataDir == "" {
			return "", nil
		}
		path = filepath.Join(s.dataDir, ConfigFileName)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return "", nil
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("the configuration file: %w", err)
	}
	entries, err := config.ParseYAML(path, data)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.configFile != "" {
		return "", fmt.Errorf("the configuration file %s: %s was read already", path, s.configFile)
	}
	base, from, settings := maps.Clone(s.base), maps.Clone(s.baseFrom), s.settings
	fail := func(line int, err error) (string, error) {
		s.base, s.baseFrom, s.settings = base, from, settings
		return "", &config.FileError{File: path, Line: line, Err: err}
	}
	type first struct {
		key  string
		line int
	}
	seen := map[string]first{}
	for _, e := range entries {
		k, err := checkOption(e.Key, e.Value)
		if err != nil {
			return fail(e.Line, err)
		}
		if f, ok := seen[k]; ok {
			as := ""
			if f.key != e.Key {
				as = fmt.Sprintf(" as '%s'", f.key)
			}
			return fail(e.Line, fmt.Errorf("option '%s' is given twice (first at line %d%s)", e.Key, f.line, as))
		}
		seen[k] = first{e.Key, e.Line}
		if err := s.update(k, e.Value, true); err != nil {
			return fail(e.Line, err)
		}
		if s.baseFrom == nil {
			s.baseFrom = map[string]string{}
		}
		s.baseFrom[k] = fmt.Sprintf("%s:%d", abs, e.Line)
	}
	s.configFile = abs
	return path, nil
}

// ConfigFile is the absolute path of the configuration file ReadConfig
// read ("" when none).
func (s *Session) ConfigFile() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.configFile
}

// sourceLocked says where key's effective value comes from: "SET", the
// configuration file's "path:line", or "default". s.mu must be held.
func (s *Session) sourceLocked(key string) string {
	if _, ok := s.opts[key]; ok {
		return sourceSET
	}
	if from := s.baseFrom[key]; from != "" {
		return from
	}
	return sourceDefault
}
