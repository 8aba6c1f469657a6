package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"time"

	"github.com/streamsql/streamsql/session"
	"github.com/streamsql/streamsql/types"
)

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
// ended. restore, if set, is the checkpoint or savepoint the file's jobs
// start from (-s). Errors print as -f prints them: file:line:col: message.
func runRemoteFile(url, path string, wait bool, restore string) int {
	url = strings.TrimRight(url, "/")
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
		return 1
	}
	r, err := postStatements(url, string(src), restore)
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
// savepoint the jobs it submits start from (-s). It returns at the end of
// the input.
func runRemoteShell(url, restore string) int {
	url = strings.TrimRight(url, "/")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 16<<20)
	var stmt strings.Builder
	code := 0
	for in.Scan() {
		line := in.Text()
		stmt.WriteString(line + "\n")
		if !strings.HasSuffix(strings.TrimSpace(line), ";") {
			continue
		}
		text := stmt.String()
		stmt.Reset()
		r, err := postStatements(url, text, restore)
		if err != nil {
			fmt.Fprintf(os.Stderr, "[ERROR] %v\n", err)
			code = 1
			continue
		}
		printRemote(r)
		if r.Error != "" {
			fmt.Fprintf(os.Stderr, "[ERROR] %s\n", r.Error)
			code = 1
		}
	}
	return code
}

// postStatements runs text on the server; restore, if set, is the
// 'execution.state-recovery.path' of this request's statements only.
func postStatements(url, text, restore string) (remoteResponse, error) {
	var r remoteResponse
	target := url + "/api/v1/statements"
	if restore != "" {
		target += "?restore=" + neturl.QueryEscape(restore)
	}
	resp, err := http.Post(target, "text/plain", strings.NewReader(text))
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return r, fmt.Errorf("%s: bad response (%s): %v", url, resp.Status, err)
	}
	return r, nil
}

type remoteJob struct {
	Name, Status, Error string
}

func remoteStatus(url, id string) (remoteJob, error) {
	resp, err := http.Get(url + "/api/v1/jobs/" + id)
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
