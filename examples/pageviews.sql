-- Page views per app, end to end through Kafka, exactly once.
--
-- Needs a Kafka broker on 127.0.0.1:9092. With nothing installed, start
-- the one built into streamsql (in memory, for trying things out):
--
--   ./streamsql kafka-dev --port 9092 --partitions 2
--
-- and run this file in another terminal:
--
--   ./streamsql --data-dir /tmp/pageviews -f examples/pageviews.sql
--
-- examples/pageviews.sh does all of it (broker, run, counts) in one go.
--
-- 1. 1,000,000 generated clicks over 20 apps go into the Kafka topic clicks.
-- 2. A job counts them per app with its state in Pebble and a checkpoint
--    every second, into the upsert-kafka topic pv. Each checkpoint commits
--    the source offsets and the sink's Kafka transaction together: a job
--    killed at any moment resumes from its last checkpoint, and readers
--    of pv (read_committed) see every click counted exactly once.
-- 3. The counts are read back from pv.
--
-- To watch the committed counts with kcat (the last record of each key
-- wins):
--
--   kcat -C -b 127.0.0.1:9092 -t pv -e -q -X isolation.level=read_committed -f '%k %s\n'

-- Generated clicks: ids 1..1000000, app 1..20, user 1..10000, a
-- timestamp up to 5 s in the past.
CREATE TABLE gen (
  click_id BIGINT,
  app      INT,
  user_id  INT,
  ts       TIMESTAMP(3)
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '1000000',
  'rows-per-second' = '250000',
  'fields.click_id.kind' = 'sequence',
  'fields.click_id.start' = '1',
  'fields.click_id.end' = '1000000',
  'fields.app.min' = '1',
  'fields.app.max' = '20',
  'fields.user_id.min' = '1',
  'fields.user_id.max' = '10000',
  'fields.ts.max-past' = '5 s'
);

-- The clicks topic, as JSON: written by step 1 (in transactions, exactly
-- once too), read by step 2 from the start to the end offsets it finds
-- when it starts ('scan.bounded.mode'), so that job ends when it has
-- counted them all.
CREATE TABLE clicks (
  click_id BIGINT,
  app_id   STRING,
  user_id  INT,
  ts       TIMESTAMP(3)
) WITH (
  'connector' = 'kafka',
  'topic' = 'clicks',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'properties.group.id' = 'pageviews',
  'scan.startup.mode' = 'earliest-offset',
  'scan.bounded.mode' = 'latest-offset',
  'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'clicks'
);

-- Page views per app: the message key is the primary key, every update of
-- a count is an upsert of its key, written in Kafka transactions that
-- commit with the checkpoints.
CREATE TABLE pv (
  app_id STRING,
  pv     BIGINT,
  PRIMARY KEY (app_id) NOT ENFORCED
) WITH (
  'connector' = 'upsert-kafka',
  'topic' = 'pv',
  'properties.bootstrap.servers' = '127.0.0.1:9092',
  'key.format' = 'json',
  'value.format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once',
  'sink.transactional-id-prefix' = 'pageviews',
  'scan.bounded.mode' = 'latest-offset'
);

SET 'state.backend' = 'pebble';
SET 'execution.checkpointing.interval' = '1s';
-- Each INSERT waits for its job, so the steps run one after the other.
SET 'table.dml-sync' = 'true';

-- Step 1: the clicks into Kafka.
SET 'pipeline.name' = 'clicks-to-kafka';
INSERT INTO clicks
SELECT click_id, CONCAT('app-', CAST(app AS STRING)), user_id, ts
FROM gen;

-- Step 2: the page views per app, exactly once.
SET 'pipeline.name' = 'pageviews';
INSERT INTO pv
SELECT app_id, COUNT(*) AS pv
FROM clicks
GROUP BY app_id;

-- Both jobs: status, records in and out (DESCRIBE JOB '<id>' shows the
-- last checkpoint, skipped records and the rest).
SHOW JOBS;

-- Step 3: the committed counts, read back from the pv topic (an
-- upsert-kafka scan reads the topic as a changelog: the last value per key).
SELECT app_id, pv FROM pv ORDER BY app_id;
SELECT COUNT(*) AS apps, SUM(pv) AS clicks FROM pv;
