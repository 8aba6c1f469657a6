package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// redrawEvery is how often, at most, the table result mode redraws a
// changing result on a terminal.
const redrawEvery = 200 * time.Millisecond

// display says where and how query results are shown.
type display struct {
	out io.Writer
	// terminal is set when out is a terminal: the table mode then redraws
	// the result as it changes instead of printing it once at the end.
	terminal bool
	// size returns the terminal's width and height; nil or zeros mean
	// 80x24.
	size func() (width, height int)
}

func (d display) termSize() (int, int) {
	w, h := 0, 0
	if d.size != nil {
		w, h = d.size()
	}
	if w <= 0 {
		w = 80
	}
	if h <= 0 {
		h = 24
	}
	return w, h
}

// resultPrinter receives a query's result as Session.Query produces it.
type resultPrinter interface {
	// begin is called with the result columns before any change.
	begin(schema types.Schema, bounded bool)
	// change is called for each change of the result, possibly from
	// several goroutines.
	change(c session.Change) error
	// end is called once the query is over: done says whether it ended by
	// itself (false when canceled or failed).
	end(done bool)
}

// runQuery runs a SELECT with Session.Query and prints its result in the
// session's result mode (session.OptResultMode). When ctx is canceled it
// prints what it has, then "Query canceled.", and returns ctx's error.
func runQuery(ctx context.Context, sess *session.Session, st *sql.Select, d display) error {
	var p resultPrinter
	switch st := sess.Settings(); st.ResultMode {
	case "tableau", "changelog":
		p = &streamPrinter{out: d.out}
	default:
		p = &tablePrinter{d: d, maxRows: st.MaxRows}
	}
	started := false
	err := sess.Query(ctx, st, func(schema types.Schema, bounded bool) {
		started = true
		p.begin(schema, bounded)
	}, p.change)
	if started {
		p.end(err == nil)
	}
	if err != nil && ctx.Err() != nil {
		// Canceled: whatever the engine's error says, it is the cancel's.
		fmt.Fprintln(d.out, "Query canceled.")
		return ctx.Err()
	}
	return err
}

// streamPrinter prints each change as it arrives (tableau and changelog
// modes).
type streamPrinter struct {
	out io.Writer
	mu  sync.Mutex
	t   *streamTable
}

func (p *streamPrinter) begin(schema types.Schema, bounded bool) {
	p.t = newStreamTable(p.out, schema)
	p.t.begin()
}

func (p *streamPrinter) change(c session.Change) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t.add(c)
	return nil
}

func (p *streamPrinter) end(done bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.t.end()
}

// tablePrinter keeps the result materialized (table mode). On a terminal it
// redraws the result at most every redrawEvery while it changes; at the end
// it prints the whole final table and its row count.
type tablePrinter struct {
	d       display
	maxRows int

	mu      sync.Mutex
	schema  types.Schema
	table   *session.Table
	changes int
	dirty   bool
	drawn   int // lines of the last redraw, erased before the next
	stop    chan struct{}
	stopped chan struct{}
}

func (p *tablePrinter) begin(schema types.Schema, bounded bool) {
	p.schema, p.table = schema, session.NewTable()
	if !p.d.terminal {
		return
	}
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	go p.redrawLoop()
}

func (p *tablePrinter) change(c session.Change) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.table.Apply(c); err != nil {
		return err
	}
	if p.maxRows > 0 && p.table.Len() > p.maxRows {
		return fmt.Errorf("the result has more than %d rows (%s)", p.maxRows, session.OptMaxRows)
	}
	p.changes++
	p.dirty = true
	return nil
}

func (p *tablePrinter) redrawLoop() {
	defer close(p.stopped)
	tick := time.NewTicker(redrawEvery)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
			p.mu.Lock()
			if p.dirty {
				p.redraw()
				p.dirty = false
			}
			p.mu.Unlock()
		}
	}
}

// redraw erases the previous drawing and draws the current result, cut to
// the terminal's size. p.mu is held.
func (p *tablePrinter) redraw() {
	width, height := p.d.termSize()
	lines := liveLines(p.schema, p.table.Rows(), p.changes, width, height)
	var b strings.Builder
	b.WriteString(eraseLines(p.drawn))
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	io.WriteString(p.d.out, b.String())
	p.drawn = len(lines)
}

func (p *tablePrinter) end(done bool) {
	if p.stop != nil {
		close(p.stop)
		<-p.stopped
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	io.WriteString(p.d.out, eraseLines(p.drawn))
	p.drawn = 0
	rows := p.table.Rows()
	writeTable(p.d.out, p.schema, rows)
	fmt.Fprintln(p.d.out, rowsInSet(len(rows)))
}

// liveLines is the drawing of a changing result on a terminal of the given
// size: the table with as many rows as fit, a line saying how many are not
// shown, and a status line. No line is wider than width-1 cells, so each
// takes exactly one line of the screen.
func liveLines(schema types.Schema, rows [][]types.Value, changes, width, height int) []string {
	fit := max(height-6, 1) // borders, header, "more" line, status line
	shown := rows
	if len(shown) > fit {
		shown = shown[:fit]
	}
	lines := tableLines(schema, shown)
	if len(rows) > len(shown) {
		lines = append(lines, fmt.Sprintf("... %d more rows", len(rows)-len(shown)))
	}
	lines = append(lines, fmt.Sprintf("%d rows, %d changes so far (Ctrl-C to stop)", len(rows), changes))
	for i, l := range lines {
		lines[i] = truncate(l, max(width-1, 4))
	}
	return lines
}

// eraseLines moves the cursor up n lines and clears the screen below it.
func eraseLines(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("\x1b[%dA\r\x1b[J", n)
}
