// Package datagen is Flink's datagen connector: a source generating rows,
// sequences or pseudo-random values per column. It is the source of the
// benchmarks, so it builds each batch's Arrow buffers directly, with no
// per-row allocation or interface call, and only for the columns the plan
// reads.
//
// Options (Flink's names and defaults):
//
//	rows-per-second        integer >= 0, default 10000: the rate of the whole
//	                       table, split evenly over the subtasks; the source
//	                       sleeps (never spins) to keep it. 0 means as fast as
//	                       possible, which Flink does not have: benchmarks
//	                       set it.
//	number-of-rows         integer >= 0, default unset (unbounded): the rows
//	                       to emit in total; the scan is bounded when set.
//	fields.<f>.kind        'random' (default) or 'sequence'
//	fields.<f>.start/.end  sequence: the first and last value (both required,
//	                       but end is optional for TIMESTAMP). A sequence
//	                       with an end makes the scan bounded: it ends after
//	                       the last value of its shortest sequence, or after
//	                       number-of-rows, whichever comes first.
//	fields.<f>.step        TIMESTAMP sequence: a duration ('1 ms', '500us',
//	                       '1 s'; a bare number is ms), default 1 ms: the
//	                       event time added per row, so row g has start +
//	                       g·step (1 ms is 1000 rows per second of event
//	                       time, Nexmark's inter-event delay).
//	fields.<f>.min/.max    random numbers: the inclusive range; default the
//	                       whole range of the type (FLOAT/DOUBLE: 0 to the
//	                       type's largest value, as Flink's Float.MIN_VALUE
//	                       lower bound effectively is).
//	fields.<f>.length      random STRING/BYTES: the length, default 100
//	fields.<f>.var-len     random STRING/BYTES: 'true' makes the length
//	                       uniform in [0, length], default 'false'
//	fields.<f>.null-rate   number in [0, 1], default 0: the share of NULLs
//	fields.<f>.max-past    TIMESTAMP: a duration ('5 s', '10min', '500' =
//	                       ms), default 0: values are the current wall-clock
//	                       time (random) or start + g·step (sequence) minus a
//	                       random amount up to this. For a sequence it is the
//	                       bounded out-of-orderness of the event time: with
//	                       WATERMARK FOR ts AS ts - INTERVAL <max-past> no
//	                       row is late.
//
// Types. Sequences: TINYINT..BIGINT, FLOAT, DOUBLE, DECIMAL (start and end
// are integers; the value steps by 1), STRING (the decimal digits of the
// number), TIMESTAMP (start and end are timestamps, 'YYYY-MM-DD
// hh:mm:ss[.fff]'; the value steps by step; the event time of a benchmark
// or a test, deterministic where a random TIMESTAMP follows the clock).
// Random: every type. A random STRING is a lowercase hex string as
// Flink's; random BYTES are random bytes. Random DATE, TIME and TIMESTAMP follow
// the wall clock in the local time zone as Flink's do (today, the time of
// day, now minus up to max-past), so they are the only values that differ
// between runs.
//
// Parallelism: subtask i of P produces the rows whose global index g
// satisfies g mod P = i, in order (g = i, i+P, i+2P, ...), so the rows of
// all subtasks together are exactly the rows of one subtask at P = 1. A
// sequence field has value start+g (TIMESTAMP: start+g·step); number-of-rows
// bounds g. Each subtask's event time thus advances by P·step per row of
// its own, and the watermarks of all subtasks advance together.
//
// Determinism: a random value is a function of the seed of its field and g
// only (a counter-based generator: splitmix64 of seed + g·φ), and the seed
// is the FNV-1a hash of the table name and the field name (lower case). So
// reruns, restores and changes of parallelism all produce the same values.
//
// Splits and checkpoints: subtask i of P emits the split of rows i, i+P,
// i+2P, ...; the snapshot lists the subtask's splits (first row, stride)
// and how many rows of each it emitted, so a restore resumes at exactly the
// next row. A restore at another parallelism (exec.Rescalable) deals the
// old splits round-robin to the new subtasks. A subtask with several splits
// reads them in turns, one batch each, so that all advance (an unbounded
// split never ends), and each split has its own watermark
// (exec.SplitSource, named "first/stride").
package datagen
