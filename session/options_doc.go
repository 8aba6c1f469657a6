package session

import (
	"sort"
	"strings"

	"github.com/streamsql/streamsql/checkpoint"
	"github.com/streamsql/streamsql/internal/config"
	"github.com/streamsql/streamsql/planner"
	"github.com/streamsql/streamsql/udf"
)

// OptionsMarkdown is docs/OPTIONS.md: every option SET accepts and every
// table option the engine reads, by scope, with its default, the values it
// takes and what it does, from their definitions (a test keeps the file
// equal to it).
func OptionsMarkdown() string {
	var b strings.Builder
	b.WriteString(`# Options

Generated from the options' definitions (` + "`go test ./session -run TestOptionsDoc -update-docs`" + `
rewrites it). A value is checked when it is given: at ` + "`SET`" + ` for the session's, the
job's, checkpointing and restart options, at ` + "`CREATE TABLE`" + ` for table options. A bad
one is refused with one message naming the key, the value and what is allowed, e.g.

    option 'parallelism.default' must be an integer between 1 and 32768, got '0'

` + "`SET`" + ` of a key not listed here is an error (with the closest key as a hint). Durations
are written as Flink writes them: '500 ms', '5 s', '1 min', '2 h'; a number alone is
milliseconds. Booleans are 'true' or 'false'; choices are compared without regard to case.

## The configuration file

The session's, job's, checkpointing and restart options (not the table options) may also be
given in a file in Flink 2's ` + "`config.yaml`" + ` layout: ` + "`streamsql --config FILE`" + ` (the shell,
` + "`-f`" + ` and ` + "`streamsql server`" + `), else ` + "`<data-dir>/config.yaml`" + ` when it exists. It is one YAML
map; a key is flat (` + "`execution.checkpointing.interval: 10 s`" + `) or nested maps whose keys join
with dots (` + "`execution: {checkpointing: {interval: 10 s}}`" + `), and the two forms mix. Each
value is checked by the option's definition as at ` + "`SET`" + `, and every error names the file and
line:

    config.yaml:4: option 'execution.checkpointing.interval' must be a non-negative duration such as '30 s' or '500 ms', got 'soon'

An unknown key, a list, an empty value, or one option given twice (flat and nested, or under two
of its names) is an error too; nothing in the file is accepted and ignored, and a file with an
error is not applied at all (the shell, ` + "`-f`" + ` and the server do not start). The file's values
are the session's base: a ` + "`SET`" + ` overrides one for the session, and ` + "`RESET`" + ` returns to the
file's value, not the default. ` + "`SET;`" + ` (no arguments) lists each option's value with its
source: ` + "`default`" + `, the file's ` + "`path:line`" + `, or ` + "`SET`" + `. On the server, the file is the base
of the one session every client's statements run in (docs/API.md). ` + "`SET;`" + ` shows the value of
a secret masked (` + "`******`" + `: an option whose key holds ` + "`secret`" + `, ` + "`password`" + `, ` + "`token`" + `, ` + "`apikey`" + `,
` + "`jaas.config`" + `... as Flink masks them), but the configuration file, and a server's
` + "`server/options.json`" + ` and ` + "`server/jobs.json`" + `, keep it in the clear: keep credentials
(` + "`s3.secret-key`" + `) in the AWS variables or files rather than in the configuration file.

`)
	section := func(title, text string, defs []config.Def) {
		b.WriteString("## " + title + "\n\n" + text + "\n\n" + config.Markdown(defs) + "\n")
	}
	section("Session", "Read by the session and the shell (`sessionDefs` in session/options.go).", sessionDefs())
	section("Job", "Read when a job is planned (`planner.JobOptions`); they apply to the jobs planned after the SET.", planner.JobOptionDefs())
	section("Checkpointing", "Read when a job is submitted (`checkpoint.Options`).", checkpoint.OptionDefs())
	section("Restart strategy", "Read when a job is submitted (`checkpoint.ParseRestart`); a strategy's options are checked whichever strategy is chosen.", checkpoint.RestartDefs())
	section("Table", "Options of `CREATE TABLE ... WITH (...)` that the engine reads whatever the connector (`catalog.TableOptionDefs`); "+
		"each connector's own options are checked by the connector at `CREATE TABLE`.", tableDefs())
	section("Function", "Options of `CREATE FUNCTION ... LANGUAGE WASM WITH (...)`, the sandbox of a user-defined function "+
		"(`udf.OptionDefs`; docs/UDF.md), checked at `CREATE FUNCTION`; another key is an error.", udf.OptionDefs())
	var al []string
	for k, v := range aliases {
		al = append(al, "`"+k+"` is `"+v+"`")
	}
	sort.Strings(al)
	b.WriteString("## Other names\n\nFlink's older and newer names of some options set the same option: " + strings.Join(al, ", ") +
		". RisingWave's `RW_IMPLICIT_FLUSH` (true, false, on, off) is `table.dml-sync` and `STREAMING_PARALLELISM` " +
		"(0 resets it) is `parallelism.default`.\n\n")
	b.WriteString("## Refused\n\nKnown to Flink but not implemented, so refused with a message saying so: `" + OptRuntimeMode + "` = 'batch', `" +
		OptLatencyGranularity + "` = 'single' and 'subtask'.\n")
	return b.String()
}
