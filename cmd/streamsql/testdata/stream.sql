-- An unbounded job: it runs until streamsql gets SIGINT or SIGTERM.
CREATE TABLE ticks (id BIGINT) WITH (
  'connector' = 'datagen',
  'rows-per-second' = '50',
  'fields.id.kind' = 'sequence',
  'fields.id.start' = '1',
  'fields.id.end' = '1000000000'
);
CREATE TABLE out (id BIGINT) WITH ('connector' = 'print');
INSERT INTO out SELECT id FROM ticks;
