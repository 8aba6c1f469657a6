-- A 1M-key GROUP BY on Pebble state with 10 s checkpoints, unbounded:
-- run.sh samples the resident memory of the process running it.
SET 'execution.checkpointing.interval' = '10s';
SET 'state.backend' = 'pebble';
CREATE TABLE ev (k BIGINT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100000',
  'fields.k.min' = '1', 'fields.k.max' = '1000000', 'fields.v.min' = '0', 'fields.v.max' = '1000');
CREATE TABLE out_t (k BIGINT, c BIGINT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out_t SELECT k, COUNT(*), SUM(v) FROM ev GROUP BY k;
