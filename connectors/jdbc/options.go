package jdbc

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/connectors/internal/option"
	"github.com/streamsql/streamsql/types"
)

// Option keys (Flink's JDBC connector's, with its defaults).
const (
	OptURL               = "url"
	OptTableName         = "table-name"
	OptUsername          = "username"
	OptPassword          = "password"
	OptFlushMaxRows      = "sink.buffer-flush.max-rows"
	OptFlushInterval     = "sink.buffer-flush.interval"
	OptMaxRetries        = "sink.max-retries"
	OptParallelism       = catalog.OptSinkParallelism // read by the planner
	OptDeliveryGuarantee = "sink.delivery-guarantee"
)

// The values of OptDeliveryGuarantee.
const (
	AtLeastOnce = "at-least-once"
	ExactlyOnce = "exactly-once"
)

// Defaults, Flink's.
const (
	defaultMaxRows    = 100
	defaultInterval   = time.Second
	defaultMaxRetries = 3
)

// ErrBadTable is wrapped by the errors of a jdbc table's declaration
// (options, column types) that CREATE TABLE reports.
var ErrBadTable = errors.New("jdbc table")

// config is a jdbc table's options, parsed.
type config struct {
	connString string // pgx's postgres:// form of 'url' with the credentials
	url        string // 'url' as written, for messages
	table      string // 'table-name', as SQL (each part quoted if it must be)
	tableName  string // 'table-name' as written
	maxRows    int
	interval   time.Duration
	maxRetries int
	exactly    bool
}

// parse reads and checks the options of table t (its physical columns
// and primary key).
func parse(opts map[string]string, schema types.Schema, pk []string) (*config, error) {
	c := &config{url: opts[OptURL], tableName: opts[OptTableName]}
	var err error
	if c.connString, err = connString(c.url, opts[OptUsername], opts[OptPassword]); err != nil {
		return nil, err
	}
	if c.table, err = tableIdent(c.tableName); err != nil {
		return nil, err
	}
	n, err := option.Int(opts, OptFlushMaxRows, defaultMaxRows, 0, 1<<24)
	if err != nil {
		return nil, err
	}
	c.maxRows = int(n)
	c.interval = defaultInterval
	if v, ok := opts[OptFlushInterval]; ok {
		if c.interval, err = types.ParseDuration(v); err != nil || c.interval < 0 {
			return nil, option.Bad(OptFlushInterval, v, "a duration of 0 (no flush by time) or more, e.g. '1 s'")
		}
	}
	if n, err = option.Int(opts, OptMaxRetries, defaultMaxRetries, 0, 1000); err != nil {
		return nil, err
	}
	c.maxRetries = int(n)
	g, err := option.Enum(opts, OptDeliveryGuarantee, AtLeastOnce, AtLeastOnce, ExactlyOnce)
	if err != nil {
		return nil, err
	}
	c.exactly = g == ExactlyOnce
	if _, ok := opts[OptFlushInterval]; ok && c.exactly && c.interval > 0 {
		return nil, fmt.Errorf("%w: '%s' does not apply with '%s' = '%s': the rows become visible when a checkpoint completes; leave it out",
			ErrBadTable, OptFlushInterval, OptDeliveryGuarantee, ExactlyOnce)
	}
	for _, col := range schema {
		if _, err := newColumn(col.Type); err != nil {
			return nil, fmt.Errorf("%w: column %s: %v", ErrBadTable, col.Name, err)
		}
	}
	for _, k := range pk {
		if schema.Index(k) < 0 {
			return nil, fmt.Errorf("%w: PRIMARY KEY column %s is not a column of the table", ErrBadTable, k)
		}
	}
	return c, nil
}

// validate is the connector's check at CREATE TABLE.
func validate(t *catalog.Table) error {
	_, err := parse(t.Options, t.Columns, t.PrimaryKey)
	return err
}

// urlParams maps the parameters of a JDBC URL that the connector
// understands to the libpq ones.
var urlParams = map[string]string{
	"sslmode":         "sslmode",
	"user":            "user",
	"password":        "password",
	"currentSchema":   "search_path",
	"ApplicationName": "application_name",
	"applicationName": "application_name",
	"connectTimeout":  "connect_timeout",
}

// connString turns a jdbc:postgresql://host[:port]/database[?params] URL
// and the credentials into the postgres:// form pgx reads.
func connString(raw, user, password string) (string, error) {
	bad := func(why string) error {
		return option.Bad(OptURL, raw, "jdbc:postgresql://host[:port]/database ("+why+")")
	}
	rest, ok := strings.CutPrefix(raw, "jdbc:postgresql:")
	if !ok {
		return "", bad("the jdbc connector writes to PostgreSQL only")
	}
	u, err := url.Parse("postgres:" + rest)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return "", bad("no host")
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return "", bad("no database")
	}
	if u.User != nil {
		return "", bad("credentials go in 'username' and 'password', or the URL's user and password parameters")
	}
	q := url.Values{}
	for k, vs := range u.Query() {
		to, ok := urlParams[k]
		if !ok {
			var known []string
			for k := range urlParams {
				known = append(known, k)
			}
			return "", bad(fmt.Sprintf("unknown parameter '%s'; known: %s", k, strings.Join(slices.Sorted(slices.Values(known)), ", ")))
		}
		v := vs[len(vs)-1]
		if k == "connectTimeout" {
			if _, err := strconv.Atoi(v); err != nil {
				return "", bad("connectTimeout is seconds")
			}
		}
		q.Set(to, v)
	}
	if user != "" {
		q.Set("user", user)
	}
	if password != "" {
		q.Set("password", password)
	}
	out := url.URL{Scheme: "postgres", Host: u.Host, Path: "/" + db, RawQuery: q.Encode()}
	return out.String(), nil
}

var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]*$`)

// ident writes a name as Flink's PostgreSQL dialect does, as it is
// (PostgreSQL folds it to lower case), unless it is not a plain
// identifier: then it is quoted, exactly as written.
func ident(name string) string {
	if plainIdent.MatchString(name) {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// tableIdent is 'table-name' as SQL: [schema.]table.
func tableIdent(name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("%w: '%s' is required", ErrBadTable, OptTableName)
	}
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", option.Bad(OptTableName, name, "a table name, or schema.table")
	}
	for i, p := range parts {
		if p == "" {
			return "", option.Bad(OptTableName, name, "a table name, or schema.table")
		}
		parts[i] = ident(p)
	}
	return strings.Join(parts, "."), nil
}
