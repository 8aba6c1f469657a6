package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestAccumulator(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		// want holds, for each line, the text returned ("" when the
		// statement is not complete yet).
		want []string
	}{
		{"one line", []string{"SELECT 1;"}, []string{"SELECT 1;"}},
		{"several lines", []string{"SELECT a,", "  b", "FROM t;"}, []string{"", "", "SELECT a,\n  b\nFROM t;"}},
		{"two statements on a line", []string{"SELECT 1; SELECT 2;"}, []string{"SELECT 1; SELECT 2;"}},
		{"';' inside a string", []string{"SELECT 'a;", "b';"}, []string{"", "SELECT 'a;\nb';"}},
		{"';' inside a comment", []string{"SELECT 1 -- done;", ";"}, []string{"", "SELECT 1 -- done;\n;"}},
		{"statement set ends at END", []string{"EXECUTE STATEMENT SET BEGIN", "INSERT INTO a SELECT 1;", "INSERT INTO b SELECT 2;", "END;"},
			[]string{"", "", "", "EXECUTE STATEMENT SET BEGIN\nINSERT INTO a SELECT 1;\nINSERT INTO b SELECT 2;\nEND;"}},
		{"a comment alone is dropped", []string{"-- just a comment", "SELECT 1;"}, []string{"", "SELECT 1;"}},
		{"blank lines are dropped", []string{"", "   ", "SELECT 1;"}, []string{"", "", "SELECT 1;"}},
		{"an open block comment waits", []string{"/* a", "b */ SELECT 1;"}, []string{"", "/* a\nb */ SELECT 1;"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a accumulator
			var got []string
			for _, l := range tt.lines {
				text, ok := a.add(l)
				if ok != (text != "") {
					t.Errorf("add(%q) = %q, %v", l, text, ok)
				}
				got = append(got, text)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if !a.empty() {
				t.Errorf("lines left over: %q", a.lines)
			}
		})
	}
}

func TestAccumulatorEmptiness(t *testing.T) {
	var a accumulator
	a.add("SELECT")
	if a.empty() {
		t.Fatal("an unfinished statement left the accumulator empty")
	}
	a.reset()
	if !a.empty() {
		t.Fatal("reset left lines")
	}
	a.add("-- a comment")
	if !a.empty() {
		t.Fatal("a comment alone was kept")
	}
}

func TestShellCommand(t *testing.T) {
	tests := map[string]int{
		"help": cmdHelp, "HELP;": cmdHelp, `\h`: cmdHelp, "  ?  ": cmdHelp,
		"quit": cmdQuit, "exit;": cmdQuit, "EXIT": cmdQuit, `\q`: cmdQuit,
		"SELECT 1;": cmdNone, "helpme": cmdNone, "": cmdNone, "quit now": cmdNone,
		`\d`: cmdDescribe, `\d t;`: cmdDescribe, `\timing`: cmdTiming, `\timing off`: cmdTiming,
		`\x`: cmdUnknown, `\D`: cmdUnknown, ` \dt`: cmdUnknown,
	}
	for line, want := range tests {
		if got := shellCommand(line); got != want {
			t.Errorf("shellCommand(%q) = %d, want %d", line, got, want)
		}
	}
}

func TestCompleter(t *testing.T) {
	c := completer{names: func() []string { return []string{"orders", "Order_Items", "users"} }}
	tests := []struct {
		line      string
		pos       int
		want      []string
		wantWidth int
	}{
		{"SEL", 3, []string{"ECT"}, 3},
		{"sel", 3, []string{"ect"}, 3},
		{"SELECT * FROM ord", 17, []string{"er_Items", "ers", "er"}, 3},
		{"SELECT * FROM ORD", 17, []string{"er_Items", "ers", "ER"}, 3},
		{"select * from us", 16, []string{"e", "er", "ers"}, 2}, // the keywords USE and USER, the table users
		{"SELECT * FROM t WHERE x = 1 GR", 30, []string{"OUP"}, 2},
		{"SELECT ", 7, nil, 0},
		{"SEL rest", 3, []string{"ECT"}, 3},
		{"SELECT zzz", 10, nil, 3},
	}
	for _, tt := range tests {
		got, width := c.Do([]rune(tt.line), tt.pos)
		var gotS []string
		for _, g := range got {
			gotS = append(gotS, string(g))
		}
		if !sameSet(gotS, tt.want) || (len(tt.want) > 0 && width != tt.wantWidth) {
			t.Errorf("Do(%q, %d) = %q, %d; want %q, %d", tt.line, tt.pos, gotS, width, tt.want, tt.wantWidth)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

func TestHelpNamesEveryStatement(t *testing.T) {
	for _, kw := range []string{"CREATE TABLE", "CREATE [TEMPORARY] VIEW", "DROP", "INSERT INTO", "EXECUTE STATEMENT SET",
		"SELECT", "EXPLAIN", "SHOW TABLES", "SHOW VIEWS", "SHOW JOBS", "DESCRIBE", "STOP JOB", "SET", "RESET",
		"SHOW CREATE TABLE", "SHOW CREATE VIEW", "SHOW COLUMNS", "SHOW FUNCTIONS", "SHOW CATALOGS", "SHOW DATABASES",
		"SHOW CURRENT CATALOG", "SHOW CURRENT DATABASE", "USE", "DESCRIBE JOB", `\d`, `\timing`, `\q`} {
		if !strings.Contains(helpText, kw) {
			t.Errorf("help does not mention %s", kw)
		}
	}
}
