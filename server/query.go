package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// queryFlushEvery is how often, at most, a streamed query's response is
// flushed to the client while rows arrive.
const queryFlushEvery = 100 * time.Millisecond

// queryHeader is the first line of POST /api/v1/queries: the result's
// columns and how the shell shows them (the server session's result mode
// and max table rows).
type queryHeader struct {
	Columns []columnJSON `json:"columns"`
	Bounded bool         `json:"bounded"`
	Mode    string       `json:"mode"`
	MaxRows int          `json:"max_rows"`
}

// queryChange is one change of the result: its op (+I, -U, +U, -D) and
// its row, each value as the shell prints it (null for NULL).
type queryChange struct {
	Op  string    `json:"op"`
	Row []*string `json:"row"`
}

// queryEnd is the last line: end set when the query ended by itself, or
// the error that ended it.
type queryEnd struct {
	End    bool   `json:"end,omitempty"`
	Error  string `json:"error,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// query runs one SELECT and streams its changelog back as JSON lines
// (docs/API.md): a header, a line per change as the engine produces it,
// and a last line. It runs until the query ends by itself (bounded input)
// or the client goes away, which cancels it: that is how a client stops an
// unbounded query. A statement that does not plan is a 400 with the usual
// error body. The query is planned under the statement lock (with the
// session's options as they are then) and runs outside it, so other
// clients' statements go on meanwhile.
func (s *Server) query(w http.ResponseWriter, r *http.Request) {
	body, ok := readSQL(w, r)
	if !ok {
		return
	}
	stmts, err := sql.Parse(body)
	if err != nil {
		writeError(w, 400, err)
		return
	}
	var sel *sql.Select
	if len(stmts) == 1 {
		sel, _ = stmts[0].(*sql.Select)
	}
	if sel == nil {
		writeError(w, 400, errors.New("POST /api/v1/queries takes one SELECT statement (others go to POST /api/v1/statements)"))
		return
	}

	s.stmtMu.Lock()
	var unlock sync.Once
	release := func() { unlock.Do(s.stmtMu.Unlock) }
	defer release()
	settings := s.sess.Settings()

	out := &lineWriter{w: w, rc: http.NewResponseController(w)}
	var cols types.Schema
	started := false
	err = s.sess.Query(r.Context(), sel, func(schema types.Schema, bounded bool) {
		release()
		started, cols = true, schema
		h := queryHeader{Bounded: bounded, Mode: settings.ResultMode, MaxRows: settings.MaxRows}
		for _, c := range schema {
			h.Columns = append(h.Columns, columnJSON{Name: c.Name, Type: c.Type.String()})
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		out.write(h)
		out.flush()
		out.startFlusher()
	}, func(c session.Change) error {
		ch := queryChange{Op: c.Op.String(), Row: make([]*string, len(c.Row))}
		for i, v := range c.Row {
			if v != nil {
				t := types.Format(cols[i].Type, v)
				ch.Row[i] = &t
			}
		}
		return out.write(ch)
	})
	if !started {
		release()
		if err == nil {
			err = errors.New("the query produced no result columns")
		}
		writeError(w, 400, err)
		return
	}
	out.stopFlusher()
	if r.Context().Err() != nil {
		return // the client went away: nobody to tell
	}
	end := queryEnd{End: err == nil}
	if err != nil {
		end.Error = capMessage(err.Error())
		var se *sql.Error
		if errors.As(err, &se) {
			end.Line, end.Column = se.Pos.Line, se.Pos.Col
		}
	}
	out.write(end)
	out.flush()
}

// lineWriter writes JSON lines to a streamed response from any goroutine,
// and flushes them every queryFlushEvery while the query runs.
type lineWriter struct {
	w  io.Writer
	rc *http.ResponseController

	mu    sync.Mutex
	dirty bool
	err   error // the first write's error: the client is gone
	stop  chan struct{}
	done  chan struct{}
}

func (l *lineWriter) write(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	if _, err := l.w.Write(append(data, '\n')); err != nil {
		l.err = fmt.Errorf("writing the result to the client: %w", err)
		return l.err
	}
	l.dirty = true
	return nil
}

func (l *lineWriter) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.dirty || l.err != nil {
		return
	}
	l.dirty = false
	if err := l.rc.Flush(); err != nil {
		l.err = err
	}
}

func (l *lineWriter) startFlusher() {
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(l.done)
		tick := time.NewTicker(queryFlushEvery)
		defer tick.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-tick.C:
				l.flush()
			}
		}
	}()
}

func (l *lineWriter) stopFlusher() {
	if l.stop != nil {
		close(l.stop)
		<-l.done
	}
}
