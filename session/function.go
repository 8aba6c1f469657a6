package session

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
	"github.com/streamsql/streamsql/udf"
)

// createFunction is CREATE [TEMPORARY] FUNCTION name AS 'module.wasm'
// LANGUAGE WASM [WITH (...)]: the module is compiled and asked for its
// signature now, so that a bad module or option is an error here, and
// calls are type-checked when they are planned.
func (s *Session) createFunction(st *sql.CreateFunction) (*Result, error) {
	if planner.IsBuiltinFunction(st.Name) {
		return nil, &sql.Error{Pos: st.NamePos, Msg: fmt.Sprintf("%s is a built-in function: a user function may not take its name", st.Name),
			Hint: "choose another name"}
	}
	opts := map[string]string{}
	for _, o := range st.Options {
		opts[o.Key] = o.Value
		if _, err := udf.ParseOptions(map[string]string{o.Key: o.Value}); err != nil {
			return nil, &sql.Error{Pos: o.Pos, Msg: err.Error()}
		}
	}
	parsed, err := udf.ParseOptions(opts)
	if err != nil {
		return nil, &sql.Error{Pos: st.Pos(), Msg: err.Error()}
	}
	path := st.Path
	if rest, ok := strings.CutPrefix(path, "file://"); ok {
		path = rest
	}
	if strings.Contains(path, "://") {
		return nil, &sql.Error{Pos: st.PathPos, Msg: fmt.Sprintf("module '%s': only a local file is supported", st.Path)}
	}
	s.mu.Lock()
	err = s.checkPathLocked("the module", path)
	s.mu.Unlock()
	if err != nil {
		return nil, &sql.Error{Pos: st.PathPos, Msg: err.Error()}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &sql.Error{Pos: st.PathPos, Msg: err.Error()}
	}
	wasm, err := udf.ReadModule(abs)
	if err != nil {
		return nil, &sql.Error{Pos: st.PathPos, Msg: fmt.Sprintf("function %s: its module: %v", st.Name, err)}
	}
	m, err := udf.Load(st.Name, wasm, parsed)
	if err != nil {
		return nil, &sql.Error{Pos: st.PathPos, Msg: err.Error()}
	}
	sig := m.Signature()
	sum := sha256.Sum256(wasm)
	f := &catalog.Function{Name: st.Name, Path: abs, SHA256: hex.EncodeToString(sum[:]), Args: sig.Args, Ret: sig.Ret,
		CalledOnNull: sig.CalledOnNull, Temporary: st.Temporary}
	if len(opts) > 0 {
		f.Options = opts
	}
	_, existed := s.cat.Function(st.Name)
	if err := s.cat.CreateFunction(f, st.IfNotExists); errors.Is(err, catalog.ErrSameDefinition) {
		return &Result{Message: "[INFO] Function " + f.Name + " already exists with this definition."}, nil
	} else if err != nil {
		return nil, &sql.Error{Pos: st.NamePos, Msg: err.Error()}
	}
	return created("Function", f.Name, existed), nil
}

// dropFunction is DROP [TEMPORARY] FUNCTION [IF EXISTS] name.
func (s *Session) dropFunction(st *sql.Drop) (*Result, error) {
	_, existed := s.cat.Function(st.Name)
	if err := s.cat.DropFunction(st.Name, st.IfExists, st.Temporary); err != nil {
		hint := ""
		if !existed {
			hint = "use DROP FUNCTION IF EXISTS to ignore a missing one; SHOW USER FUNCTIONS lists them"
		}
		return nil, &sql.Error{Pos: st.NamePos, Msg: err.Error(), Hint: hint}
	}
	if !existed {
		return &Result{Message: fmt.Sprintf("[INFO] Function '%s' does not exist: nothing dropped.", brief(st.Name))}, nil
	}
	return &Result{Message: fmt.Sprintf("[INFO] Function '%s' dropped.", brief(st.Name))}, nil
}

// describeFunction is DESCRIBE FUNCTION name: a user function's
// signature, module and options, or that a built-in one is built in.
func (s *Session) describeFunction(st *sql.DescribeFunction) (*Result, error) {
	r := &Result{Kind: ResultRows, Columns: types.Schema{{Name: "info name", Type: types.StringType}, {Name: "info value", Type: types.StringType}}}
	add := func(k, v string) { r.Rows = append(r.Rows, []types.Value{k, v}) }
	f, ok := s.cat.Function(st.Name)
	if !ok {
		if planner.IsBuiltinFunction(st.Name) {
			add("name", strings.ToLower(st.Name))
			add("kind", "built-in")
			return r, nil
		}
		return nil, &sql.Error{Pos: st.NamePos, Msg: fmt.Sprintf("%v: %s", catalog.ErrFunctionNotFound, st.Name),
			Hint: "SHOW FUNCTIONS lists them"}
	}
	sig := udf.Signature{Args: f.Args, Ret: f.Ret, CalledOnNull: f.CalledOnNull}
	add("name", f.Name)
	add("kind", "user")
	add("temporary", fmt.Sprint(f.Temporary))
	add("language", "WASM")
	add("module", f.Path)
	add("signature", sig.String())
	for _, d := range udf.OptionDefs() {
		v, ok := f.Options[d.Key()]
		if !ok {
			v = d.DefaultText()
		}
		add(d.Key(), v)
	}
	if v, _ := udf.ParseOptions(f.Options); v.IgnoreErrors {
		if m, err := planner.LoadFunction(f); err == nil {
			add("failed rows", fmt.Sprint(m.FailedRows()))
		}
	}
	return r, nil
}
