// Package functions is streamsql's scalar function library: every operator
// and function a query may call, how each resolves against argument types
// (result type, the casts its arguments need), and the kernels that
// evaluate them over Arrow arrays a batch at a time.
//
// # What it owns
//
//   - The registry: Lookup(name) finds a Func by its upper-case name ("+",
//     "=", "AND", "IS NULL", "UPPER", ...); Names lists them for hints.
//   - Resolution: Func.Resolve (or Func.ResolveArgs, which also knows the
//     literal arguments) returns the result type, the type each argument
//     must be cast to first (with Cast), and the Kernel.
//   - The type rules the planner needs elsewhere: ImplicitCast (Flink's
//     implicit widening), CommonType (UNION, CASE branches, IN lists,
//     comparisons), Cast/TryCast/CanCast.
//   - HashColumn (and HashValue for one value), the row hash of hash
//     exchanges and group-by keys.
//
// Func.Volatile marks the functions of the statement time (CURRENT_TIMESTAMP,
// NOW, LOCALTIMESTAMP, CURRENT_DATE, CURRENT_TIME, LOCALTIME,
// UNIX_TIMESTAMP()), which must not be folded at plan time, and
// CURRENT_WATERMARK(ts), which reads the watermark of the operator
// evaluating it from Context (NULL while there is none; the planner checks
// that ts is a time attribute). Two result types
// depend on a literal argument, which is why ResolveArgs exists:
// ROUND(DECIMAL(p, s), d) and TIMESTAMPADD(unit, n, DATE) (a DATE plus
// hours is a TIMESTAMP(0)).
//
// Kernels take Vecs (an Arrow array of n rows, or one constant) and return
// a new array (or a constant when every argument is constant). They work on
// the typed value buffers, treat constants without expanding them, and
// allocate per batch, never per row; the result is built in Context.Mem.
// Eval runs a Resolved call with its casts; Call resolves and evaluates in
// one step for constant folding and tests.
//
// # How the planner calls things
//
// Syntax is rewritten into plain calls:
//
//	x BETWEEN a AND b        AND(>=(x, a), <=(x, b))
//	x IN (a, b)              IN(x, a, b)            (NOT IN likewise)
//	s LIKE p ESCAPE e        LIKE(s, p, e)          (NOT LIKE likewise)
//	CASE WHEN c THEN v ... ELSE e END   CASE(c1, v1, c2, v2, ..., e)
//	CASE x WHEN a THEN v ...            CASE(=(x, a), v, ...)
//	-x                       NEG(x)
//	x IS [NOT] DISTINCT FROM y          "IS [NOT] DISTINCT FROM"(x, y)
//	POSITION(a IN s)         POSITION(a, s)
//	TRIM([BOTH|LEADING|TRAILING] [chars] FROM s)
//	                         TRIM(s) for spaces on both sides, else
//	                         TRIM('BOTH'|'LEADING'|'TRAILING', chars, s)
//	                         with chars ' ' when omitted
//	SUBSTRING(s FROM a FOR b)           SUBSTRING(s, a, b)
//	EXTRACT(unit FROM x)     EXTRACT('UNIT', x)
//	TIMESTAMPADD(unit, n, t) TIMESTAMPADD('UNIT', n, t)  (TIMESTAMPDIFF too)
//	FLOOR(t TO unit)         FLOOR(t, 'UNIT')            (CEIL too)
//	OVERLAY(s PLACING r FROM a FOR n)   OVERLAY(s, r, a, n)
//	x BETWEEN SYMMETRIC a AND b         OR(AND(>=(x, a), <=(x, b)), AND(>=(x, b), <=(x, a)))
//	(s0, x0) OVERLAPS (s1, x1)          OVERLAPS(s0, x0, s1, x1)
//	s IS JSON kind, JSON_VALUE(s, p RETURNING t ...) and the other
//	                         JSON functions: the calls json.go lists
//	s SIMILAR TO p ESCAPE e             "SIMILAR TO"(s, p, e)  (NOT SIMILAR TO likewise)
//	INTERVAL '1' HOUR as an argument    an interval literal
//	CURRENT_TIMESTAMP        CURRENT_TIMESTAMP()         (no parentheses in SQL)
//
// CASE, IF and COALESCE kernels evaluate all their arguments; the executor
// may evaluate them lazily instead using the resolved types.
// Resolved.Infallible marks the kernels that never return an error
// (comparisons, logic, field access, the conditionals): the executor
// evaluates a conditional whose arguments are all such calls, columns and
// literals over every row, as one plain call.
//
// # Dialect: Flink SQL, and where we differ
//
// Types follow Flink: INT + INT is INT (TINYINT + TINYINT is TINYINT),
// INT / INT is INT and truncates toward zero, % (MOD) has the sign of the
// dividend, DECIMAL arithmetic derives precision and scale as Flink's
// LogicalTypeMerging (capped at 38 digits keeping at least 6 fractional
// digits) and rounds half up, FLOAT/DOUBLE are IEEE (division by zero
// gives an infinity or NaN, as Java).
//
// Differences, all chosen to fail loudly rather than return a wrong value:
//
//   - Integer overflow is an error ("INT overflow: 2147483647 + 1 is out of
//     range") where Java wraps around. The range is the result type's.
//   - Integer and DECIMAL division (and modulo) by zero is an error, as in
//     Flink (which raises ArithmeticException).
//   - DECIMAL results that do not fit their precision are an error; Flink
//     returns NULL.
//   - DATE and TIMESTAMP values stay within 0001-01-01 .. 9999-12-31
//     23:59:59.999999 (Flink's range): TIMESTAMP/DATE +/- a day-time or
//     year-month interval, TIMESTAMPADD and TO_TIMESTAMP_LTZ fail with
//     "... out of the supported range: ..." beyond it; CAST of a string
//     (and a TIMESTAMP/DATE literal) with a year outside 1..9999 fails,
//     TO_TIMESTAMP and TO_DATE give NULL.
//   - CAST narrowing (BIGINT to INT, DOUBLE to INT, DECIMAL to a smaller
//     DECIMAL) is range checked and fails on values out of range; Java's
//     casts wrap or saturate. CAST from DOUBLE to an integer truncates
//     toward zero; NaN and infinities fail. TRY_CAST gives NULL instead.
//   - CAST from a string fails with "cannot cast 'abc' to INT"; strings are
//     trimmed first. BOOLEAN parses true/false/t/f/yes/no/y/n/1/0 in any
//     case. DATE is yyyy-M-d, TIME H:m[:s[.f]], TIMESTAMP a date with an
//     optional ' ' or 'T' and a time; fractions beyond the precision are
//     truncated.
//   - CAST from DECIMAL to FLOAT/DOUBLE (and the implicit one of DECIMAL
//     and DOUBLE arithmetic) is the float nearest to the decimal, as Java's
//     BigDecimal.doubleValue: CAST(3.8 AS DOUBLE) is 3.8.
//   - CAST from FLOAT/DOUBLE to DECIMAL goes through the shortest decimal
//     form of the float (as Java's BigDecimal.valueOf), so 1.005 rounds to
//     1.01; ROUND on DOUBLE does the same (Flink: ROUND(2.675, 2) = 2.68).
//   - A string compared with a DATE, TIME or TIMESTAMP is cast to the
//     temporal type; strings are not compared with numbers (no common type).
//   - LIKE has no escape character unless ESCAPE names one; an escape must
//     precede %, _ or itself.
//   - SUBSTRING follows standard SQL: SUBSTRING('hello', 0, 2) = 'h' (the
//     positions before 1 count against the length), and a negative length
//     is an error. Flink returns NULL for a negative length.
//   - UPPER/LOWER map each character on its own (Go's unicode tables);
//     Java's locale-independent special cases such as ß -> SS are not done.
//   - Regular expressions (REGEXP, REGEXP_REPLACE, REGEXP_EXTRACT) use Go's
//     RE2 syntax: Java's syntax for the common constructs, without
//     backreferences or lookaround. REGEXP_EXTRACT's group defaults to 0.
//     As in Flink, a pattern computed per row that does not compile gives
//     NULL (REGEXP: FALSE), as does a group that does not exist, and
//     REGEXP_REPLACE's replacement is literal ($1 is no group); a literal
//     pattern that does not compile, or a literal group it lacks, is an
//     error when the call is resolved (ErrInvalidArgument), where Flink
//     would give NULL on every row. Each call compiles its pattern once
//     (at resolve time when it is a literal). REGEXP allocates nothing per
//     row; the string results are built in one buffer per batch, but
//     REGEXP_EXTRACT's submatch search allocates per row.
//   - DATE_TRUNC('unit', t), which Flink lacks, is PostgreSQL's name for
//     FLOOR(t TO unit) (units MICROSECOND to YEAR, plural too); a DATE
//     becomes a TIMESTAMP(0).
//   - SPLIT_INDEX(s, sep, k) is NULL for the empty s and cuts at white
//     space for the empty sep, as Flink's.
//   - TIMESTAMP is zone-less and the session zone is UTC: there is no
//     TIMESTAMP_LTZ, so CURRENT_TIMESTAMP, NOW() and LOCALTIMESTAMP are all
//     TIMESTAMP(3) of Context.Now, FROM_UNIXTIME/UNIX_TIMESTAMP work in
//     UTC (UNIX_TIMESTAMP(s, fmt) applies the offset s names where fmt has
//     a z, Z or X field: +08, +0800, +08:00, Z, UTC, GMT+08:00; zone names
//     such as PST are not read), and TO_TIMESTAMP_LTZ(epoch, 0|3) is a
//     TIMESTAMP(3) in UTC.
//   - TO_TIMESTAMP, TO_DATE and UNIX_TIMESTAMP(string) return NULL on input
//     they cannot parse (as Flink's TO_TIMESTAMP and TO_DATE; Flink's
//     UNIX_TIMESTAMP returns Long.MIN_VALUE); CAST fails instead.
//   - CONCAT and CONCAT_WS take arguments of any type but BYTES and cast
//     them to STRING; Flink wants strings.
//   - CAST(x AS STRING) of a FLOAT prints the float's own shortest form
//     (0.1, as Java's Float.toString), and exponents without leading zeros
//     (1.0E7).
//   - FLOOR/CEIL(t TO WEEK) start weeks on Monday (ISO); EXTRACT(WEEK) is
//     the ISO week and EXTRACT(DOW) counts from Sunday = 1, as Flink.
//   - TIMESTAMPDIFF returns INT and fails when the difference does not fit.
//   - Date patterns support the letters y M d D H k h K m s S E a u w z Z X
//     G; S is a fraction of a second (SSS milliseconds, SSSSSS
//     microseconds) as in java.time. Other letters are an error.
//   - Everything is UTF-8 and counted in characters (code points), not
//     Java's UTF-16 units (OVERLAY's positions and lengths too).
//   - CHR(n) is the character of n modulo 256 (CHR(353) = 'a'), and the
//     empty string for a negative n, as Flink's.
//   - TRUNCATE(x[, d]) has ROUND's result types and cuts toward zero;
//     a FLOAT or DOUBLE is cut in its shortest decimal form.
//   - BIN and HEX of a negative integer give its 64-bit two's complement
//     (Java's Long.toBinaryString / toHexString); HEX of a string gives
//     its UTF-8 bytes.
//   - FROM_BASE64 of a string that is no base64 fails the query naming
//     the value (Flink's fails with Java's IllegalArgumentException); the
//     padding may be left out, as Java's decoder allows.
//   - URL_ENCODE/URL_DECODE are Java's URLEncoder/URLDecoder in UTF-8; a
//     bad escape decodes to NULL, as Flink's.
//   - PARSE_URL reads a URL as java.net.URL does for the schemes http,
//     https, ftp and file; any other scheme, or none, gives NULL (Java's
//     MalformedURLException, which Flink turns into NULL).
//   - TYPEOF names types as Flink's asSummaryString (asSerializableString
//     with TRUE), but of streamsql's types: a string literal is STRING NOT
//     NULL where Flink says CHAR(n) NOT NULL, a column keeps no VARCHAR(n)
//     length, and an INTERVAL is one of two types.
//   - REGEXP_COUNT, REGEXP_INSTR (in characters) and REGEXP_SUBSTR treat
//     patterns as REGEXP_EXTRACT does, and allocate per row too.
//   - RAND(seed) and RAND_INTEGER(seed, bound) are refused (a seeded
//     sequence is not reproduced across subtasks and restarts); RAND(),
//     RAND_INTEGER(bound) and UUID() give a new value for every row.
//   - STR_TO_MAP, SPLIT and REGEXP_EXTRACT_ALL are refused at the call:
//     there is no MAP or ARRAY type (ErrUnsupportedType).
//   - IS_ALPHA, IS_DIGIT and IS_DECIMAL take a STRING only (Flink's take
//     any value); IS_DECIMAL is what Java's Double.parseDouble reads. MD5,
//     SHA1, SHA2 and SHA224..SHA512 hash a STRING's UTF-8 bytes.
//   - The JSON functions follow Calcite's, which Flink's are: a path
//     without lax or strict is strict; a path with a wildcard finds the
//     array of what it reaches (so JSON_EXISTS of one that reaches nothing
//     is TRUE, as Calcite's); JSON null found is empty (ON EMPTY, and
//     JSON_EXISTS is FALSE). The path language has no filters, methods or
//     ranges (an error naming the character). JSON_VALUE's RETURNING is
//     STRING, BOOLEAN or a numeric type, and a value that does not cast to
//     it is an error of its row (ON ERROR). JSON_STRING, JSON_OBJECT and
//     JSON_ARRAY take strings, numbers and booleans; other types are an
//     error (ErrUnsupportedType). Numbers are written as Jackson writes
//     what it read: integers as written, others as Java doubles (1.50 is
//     1.5, 1e20 is 1.0E20). JSON text is read with jsontext
//     (go-json-experiment/json); a path without a wildcard is followed
//     through the text without building its tree.
//
// # Hashing
//
// HashColumn mixes xxhash64 of strings and a murmur3 finalizer of fixed
// width values into a running per-row hash. It is deterministic across
// processes (key groups survive restarts); equal values of one type hash
// equal, integers of different widths hash alike, -0.0 hashes as 0.0, and
// NULL as a fixed constant.
package functions
