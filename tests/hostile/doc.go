// Package hostile runs statements an attacker or a careless user might
// write (SQL that once made the engine panic or hang, names like '..',
// huge literals, deep nesting, broken text) through the built binary,
// `streamsql --data-dir DIR -f FILE`, one fresh data directory per case.
// Each must be answered by a clear error or a result: the test fails on a
// panic, a fatal runtime error, an exit status other than 0 or 1, or a run
// that does not end (killed after a generous backstop).
//
// The cases are datadriven files under testdata/ (hostile_test.go lists
// the commands); a case's input is a Go text/template, so that an input of
// a megabyte is one line of the file.
package hostile
