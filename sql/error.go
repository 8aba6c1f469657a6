package sql

import "fmt"

// Error is a user-facing error tied to a place in the statement text. Every
// stage (parser, catalog, planner) reports problems with a statement as an
// *Error so the user sees where to look.
type Error struct {
	Pos Pos
	Msg string
	// Hint, if set, says what to do about it ("did you mean 'app_id'?").
	Hint string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("line %d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Errorf builds an *Error at pos.
func Errorf(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
