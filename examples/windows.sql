-- Event-time windows over generated clicks: event time advances 1 ms per
-- click and runs up to 2 s behind (bounded out-of-orderness), so the
-- watermark is 2 s behind the latest click. Counts per minute and app, and
-- the clicks that came too late for their window kept in a table of their
-- own; then a sliding maximum.
CREATE TABLE clicks (
  click_id BIGINT,
  app_id   INT,
  user_id  INT,
  ts       TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '2' SECOND
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '300000',
  'rows-per-second' = '0',
  'fields.click_id.kind' = 'sequence',
  'fields.click_id.start' = '1',
  'fields.click_id.end' = '300000',
  'fields.app_id.min' = '1',
  'fields.app_id.max' = '3',
  'fields.user_id.min' = '1',
  'fields.user_id.max' = '50',
  'fields.ts.kind' = 'sequence',
  'fields.ts.start' = '2024-01-01 00:00:00',
  'fields.ts.step' = '1 ms',
  'fields.ts.max-past' = '3 s'
);

CREATE TABLE per_minute (window_start TIMESTAMP(3), app_id INT, clicks BIGINT);
CREATE TABLE late_clicks (click_id BIGINT, app_id INT, ts TIMESTAMP(3));

SET 'table.dml-sync' = 'true';
SET 'execution.checkpointing.interval' = '1 s';

-- A click up to 3 s behind but a watermark only 2 s behind: some clicks are
-- late. Instead of dropping them, send them to late_clicks.
SET 'table.exec.late-records.table' = 'late_clicks';

INSERT INTO per_minute
SELECT window_start, app_id, COUNT(*)
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, app_id;

RESET 'table.exec.late-records.table';

-- Every click is in one window or among the late ones.
SELECT (SELECT SUM(clicks) FROM per_minute) + (SELECT COUNT(*) FROM late_clicks) AS all_clicks;

SELECT * FROM per_minute ORDER BY window_start, app_id;

-- The largest click id of the last 10 seconds, every 2 seconds (Nexmark
-- q5's shape), for the first few windows.
SELECT window_end, MAX(click_id) AS newest
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
WHERE click_id <= 20000
GROUP BY window_start, window_end
ORDER BY window_end;

SHOW JOBS;
