package sql

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseScript parses a script of many small statements.
func BenchmarkParseScript(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&sb, "INSERT INTO t%d SELECT a, CAST(b AS BIGINT), ts - INTERVAL '5' SECOND FROM s WHERE c = 'x%d';\n", i, i)
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseValues parses one INSERT with many rows, each rewritten.
func BenchmarkParseValues(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("INSERT INTO t VALUES ")
	for i := 0; i < 10000; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, CAST('%d' AS INT), 'row %d')", i, i, i)
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Parse(text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseErrorLate parses a long statement whose error is at its end.
func BenchmarkParseErrorLate(b *testing.B) {
	text := "SELECT " + strings.Repeat("a + ", 20000) + "FROM t"
	for b.Loop() {
		if _, err := Parse(text); err == nil {
			b.Fatal("no error")
		}
	}
}
