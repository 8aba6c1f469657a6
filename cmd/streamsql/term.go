package main

import (
	"io"
	"os"
	"sync"

	"github.com/chzyer/readline"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool { return readline.IsTerminal(int(f.Fd())) }

// stdoutDisplay shows query results on standard output.
func stdoutDisplay() display {
	return display{
		out:      os.Stdout,
		terminal: isTerminal(os.Stdout),
		size: func() (int, int) {
			w, h, err := readline.GetSize(int(os.Stdout.Fd()))
			if err != nil {
				return 0, 0
			}
			return w, h
		},
	}
}

// statusLine is a one-line report kept on the last line of a terminal and
// rewritten in place. Output that goes to the same terminal should go
// through wrap, which moves the line out of the way.
type statusLine struct {
	mu   sync.Mutex
	w    io.Writer // the terminal
	text string    // the report; "" for none
	// hidden is set while a line of other output is incomplete: the
	// report waits for its end.
	hidden bool
}

// show replaces the line with text.
func (s *statusLine) show(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text = text
	if !s.hidden {
		io.WriteString(s.w, "\r\x1b[K"+text)
	}
}

// clear removes the line.
func (s *statusLine) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.text != "" && !s.hidden {
		io.WriteString(s.w, "\r\x1b[K")
	}
	s.text = ""
}

// wrap returns a writer to w that erases the status line before each write
// and shows it again after a write that ends a line.
func (s *statusLine) wrap(w io.Writer) io.Writer { return &statusWriter{s: s, w: w} }

type statusWriter struct {
	s *statusLine
	w io.Writer
}

func (sw *statusWriter) Write(p []byte) (int, error) {
	s := sw.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	if s.text != "" && !s.hidden {
		io.WriteString(s.w, "\r\x1b[K")
	}
	n, err := sw.w.Write(p)
	s.hidden = p[len(p)-1] != '\n'
	if s.text != "" && !s.hidden {
		io.WriteString(s.w, s.text)
	}
	return n, err
}
