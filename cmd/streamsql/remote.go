package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/streamsql/streamsql/exec"
	"github.com/streamsql/streamsql/server"
	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/sql"
	"github.com/streamsql/streamsql/types"
)

// remoteClient is the HTTP client of --server: newRemoteClient makes one
// that sends the token and trusts the CA given.
var remoteClient = http.DefaultClient

// newRemoteClient returns the client of --server: it sends the token of
// tokenFile (or of the environment variable server.TokenEnv) as
// "Authorization: Bearer", and, with caFile, trusts the certificates (PEM)
// in it for https:// URLs besides the system's.
func newRemoteClient(tokenFile, caFile string) (*http.Client, error) {
	token, err := readToken(tokenFile)
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in the file", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	var rt http.RoundTripper = tr
	if token != "" {
		rt = bearer{token: token, next: tr}
	}
	return &http.Client{Transport: rt}, nil
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// remoteResult is one statement's result from POST /api/v1/statements.
type remoteResult struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Columns []struct {
		Name string `json:"name"`
	} `json:"columns"`
	Rows  [][]*string `json:"rows"`
	Text  string      `json:"text"`
	JobID string      `json:"job_id"`
}

type remoteResponse struct {
	Results []remoteResult `json:"results"`
	Error   string         `json:"error"`
	Line    int            `json:"line"`
	Column  int            `json:"column"`
}

// runRemoteFile sends the file to the server at url and prints the
// results; it returns once the jobs are submitted, or with wait once they
// ended. restore, if set, is the checkpoint or savepoint the file's first
// job starts from (-s). Errors print as -f prints them: file:line:col: message.
func runRemoteFile(url, path string, wait bool, restore string) int {
	url = strings.TrimRight(url, "/")
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	if len(src) > server.MaxRequestBytes {
		fmt.Fprintf(os.Stderr, "[ERROR] %s: the file is too large: %d bytes, and a request to the server takes at most %d MiB (%d bytes); nothing was sent: split it into several files\n",
			path, len(src), server.MaxRequestBytes>>20, server.MaxRequestBytes)
		return 1
	}
	r, err := postStatements(url, string(src), restore)
	if errors.Is(err, errTooLarge) {
		fmt.Fprintf(os.Stderr, "[ERROR] %s: the file is too large for the server: %v\n", path, err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	jobs := printRemote(r)
	if r.Error != "" {
		at := path
		if r.Line > 0 {
			at = fmt.Sprintf("%s:%d:%d", path, r.Line, r.Column)
			r.Error = strings.TrimPrefix(r.Error, fmt.Sprintf("line %d:%d: ", r.Line, r.Column))
		}
		fmt.Fprintf(os.Stderr, "[ERROR] %s: %s\n", at, r.Error)
		return 1
	}
	if !wait {
		return 0
	}
	for _, id := range jobs {
		for {
			st, err := remoteStatus(url, id)
			if err != nil {
				fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
				return 1
			}
			if st.Status == "FAILED" {
				fmt.Fprintf(os.Stderr, "[ERROR] %s: job %s (%s) failed: %s\n", path, id, st.Name, st.Error)
				return 1
			}
			if st.Status == "FINISHED" || st.Status == "CANCELED" {
				break
			}
			time.Sleep(failurePoll)
		}
	}
	return 0
}

// printRemote prints the results of one request as the shell prints them
// and returns the ids of the jobs submitted.
func printRemote(r remoteResponse) []string {
	var jobs []string
	for _, res := range r.Results {
		switch res.Kind {
		case "rows":
			// The server sends each value as the shell prints it.
			res2 := &session.Result{Kind: session.ResultRows}
			for _, c := range res.Columns {
				res2.Columns = append(res2.Columns, types.Column{Name: c.Name, Type: types.StringType})
			}
			for _, row := range res.Rows {
				vals := make([]types.Value, len(row))
				for i, v := range row {
					if v != nil {
						vals[i] = *v
					}
				}
				res2.Rows = append(res2.Rows, vals)
			}
			printResult(os.Stdout, res2)
		case "text":
			fmt.Println(res.Text)
		default:
			fmt.Println(res.Message)
		}
		if res.JobID != "" {
			jobs = append(jobs, res.JobID)
		}
	}
	return jobs
}

// runRemoteShell reads statements from stdin (each ends with ';' at the
// end of a line) and runs each on the server at url, printing results and
// errors as the shell does; restore, if set, is the checkpoint or
// savepoint the first job it submits starts from (-s). It returns at the
// end of the input.
func runRemoteShell(url, restore string) int {
	url = strings.TrimRight(url, "/")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	var stmt strings.Builder
	code := 0
	disp := stdoutDisplay()
	for in.Scan() {
		line := in.Text()
		if strings.TrimSpace(stmt.String()) == "" {
			// The shell's commands, as the local shell reads them.
			cmd, arg := parseShellCommand(line)
			switch cmd {
			case cmdQuit:
				return code
			case cmdHelp:
				fmt.Print(helpText)
				continue
			case cmdDescribe:
				text := "SHOW TABLES;"
				if arg != "" {
					text = "DESCRIBE " + arg + ";"
				}
				if !runRemote(url, text, &restore, disp) {
					code = 1
				}
				continue
			case cmdTiming, cmdUnknown:
				fmt.Fprintf(os.Stderr, "[ERROR] shell command '%s' is not available with --server: it knows \\h, \\q and \\d [table]\n", strings.TrimSpace(line))
				code = 1
				continue
			}
		}
		stmt.WriteString(line + "\n")
		if !strings.HasSuffix(strings.TrimSpace(line), ";") {
			continue
		}
		text := stmt.String()
		stmt.Reset()
		if !runRemote(url, text, &restore, disp) {
			code = 1
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] reading the statements: %v (a line may hold at most 16 MiB)\n", err)
		return 1
	}
	return code
}

// runRemote runs the statements of text on the server at url and prints
// their results, stopping at the first error, which it prints; it reports
// whether every statement succeeded. Text without a SELECT goes to the
// server in one request; text with one goes a statement at a time, each
// SELECT through POST /api/v1/queries, its result streamed back and shown
// in the server session's result mode as the local shell shows it.
//
// *restore, if set, goes with the statements sent until one submits a job;
// it is cleared then (-s restores the first job only).
func runRemote(url, text string, restore *string, disp display) bool {
	stmts, err := sql.Parse(text)
	hasSelect := false
	for _, st := range stmts {
		if _, ok := st.(*sql.Select); ok {
			hasSelect = true
		}
	}
	if err != nil || !hasSelect {
		// A parse error too: the server reports it with its position.
		return postAndPrint(url, text, restore)
	}
	for _, st := range stmts {
		if _, ok := st.(*sql.Select); !ok {
			if !postAndPrint(url, st.Text(), restore) {
				return false
			}
			continue
		}
		if err := runRemoteQuery(url, st.Text(), disp); err != nil {
			fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
			return false
		}
	}
	return true
}

// postAndPrint runs text through POST /api/v1/statements and prints the
// results and the error, if any; it reports whether there was none.
func postAndPrint(url, text string, restore *string) bool {
	r, err := postStatements(url, text, *restore)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return false
	}
	for _, res := range r.Results {
		if res.Kind == "job" {
			*restore = ""
		}
	}
	printRemote(r)
	if r.Error != "" {
		fmt.Fprintf(os.Stderr, "[ERROR] %s\n", r.Error)
		return false
	}
	return true
}

// queryLine is a line of POST /api/v1/queries after the header: a change
// (Op set), or the last line (End or Error set).
type queryLine struct {
	Op     string    `json:"op"`
	Row    []*string `json:"row"`
	End    bool      `json:"end"`
	Error  string    `json:"error"`
	Line   int       `json:"line"`
	Column int       `json:"column"`
}

var rowKinds = map[string]exec.RowKind{"+I": exec.Insert, "-U": exec.UpdateBefore, "+U": exec.UpdateAfter, "-D": exec.Delete}

// runRemoteQuery runs a SELECT on the server through POST
// /api/v1/queries and prints its changelog as it streams back, in the
// result mode the server's session has, as runQuery does locally: an
// unbounded query runs until Ctrl-C, which closes the request (the server
// then cancels the query), prints what came and "Query canceled.", and is
// not an error.
func runRemoteQuery(url, text string, d display) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/api/v1/queries", strings.NewReader(text))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/plain")
	resp, err := remoteClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(d.out, "Query canceled.")
			return nil
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e remoteResponse
		body, _ := io.ReadAll(resp.Body)
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
		}
		return errors.New(e.Error)
	}
	in := bufio.NewScanner(resp.Body)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	if !in.Scan() {
		if ctx.Err() != nil {
			fmt.Fprintln(d.out, "Query canceled.")
			return nil
		}
		return fmt.Errorf("%s: the query's result ended before its header: %v", url, in.Err())
	}
	var h struct {
		Columns []struct{ Name, Type string } `json:"columns"`
		Mode    string                        `json:"mode"`
		MaxRows int                           `json:"max_rows"`
	}
	if err := json.Unmarshal(in.Bytes(), &h); err != nil {
		return fmt.Errorf("%s: a bad header of the query's result: %v", url, err)
	}
	schema := make(types.Schema, len(h.Columns))
	for i, c := range h.Columns {
		t, err := types.Parse(c.Type)
		if err != nil {
			t = types.StringType
		}
		schema[i] = types.Column{Name: c.Name, Type: t}
	}
	var p resultPrinter
	switch h.Mode {
	case "tableau", "changelog":
		p = &streamPrinter{out: d.out}
	default:
		p = &tablePrinter{d: d, maxRows: h.MaxRows}
	}
	p.begin(schema, false)
	var qerr error
	ended := false
	for !ended && qerr == nil && in.Scan() {
		var l queryLine
		if err := json.Unmarshal(in.Bytes(), &l); err != nil {
			qerr = fmt.Errorf("%s: a bad line of the query's result: %v", url, err)
			break
		}
		switch {
		case l.Op != "":
			op, ok := rowKinds[l.Op]
			if !ok {
				qerr = fmt.Errorf("%s: a change with op %q", url, l.Op)
				break
			}
			row := make([]types.Value, len(l.Row))
			for i, v := range l.Row {
				if v != nil {
					row[i] = preformatted(*v)
				}
			}
			qerr = p.change(session.Change{Op: op, Row: row})
		case l.Error != "":
			qerr = errors.New(l.Error)
		case l.End:
			ended = true
		}
	}
	if !ended && qerr == nil && ctx.Err() == nil {
		qerr = fmt.Errorf("%s: the query's result ended before the query: %v", url, in.Err())
	}
	p.end(ended)
	if ctx.Err() != nil && !ended {
		fmt.Fprintln(d.out, "Query canceled.")
		return nil
	}
	return qerr
}

// postStatements runs text on the server; restore, if set, is the
// 'execution.state-recovery.path' of this request's statements only.
func postStatements(url, text, restore string) (remoteResponse, error) {
	var r remoteResponse
	target := url + "/api/v1/statements"
	if restore != "" {
		target += "?restore=" + neturl.QueryEscape(restore)
	}
	resp, err := remoteClient.Post(target, "text/plain", strings.NewReader(text))
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		if resp.StatusCode == http.StatusRequestEntityTooLarge {
			return r, fmt.Errorf("%w (%s)", errTooLarge, resp.Status)
		}
		return r, fmt.Errorf("%s: bad response (%s): %v", url, resp.Status, err)
	}
	if resp.StatusCode == http.StatusRequestEntityTooLarge {
		return r, fmt.Errorf("%w: %s", errTooLarge, r.Error)
	}
	return r, nil
}

// errTooLarge is the error of a request the server refused as too large
// (413): it ran none of its statements.
var errTooLarge = errors.New("the server refused the request as too large, and ran none of its statements")

type remoteJob struct {
	Name, Status, Error string
}

func remoteStatus(url, id string) (remoteJob, error) {
	resp, err := remoteClient.Get(url + "/api/v1/jobs/" + id)
	if err != nil {
		return remoteJob{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Job struct {
			Name   string `json:"name"`
			Status string `json:"status"`
			Error  string `json:"error"`
		} `json:"job"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return remoteJob{}, fmt.Errorf("job %s: %s", id, body)
	}
	return remoteJob{r.Job.Name, r.Job.Status, r.Job.Error}, nil
}
