-- A bounded page-view count: 100,000 generated clicks grouped by app into
-- the in-memory table pv. The aggregate emits a changelog (+I for a new
-- app, then -U / +U as its counts change, as Flink's print sink would show
-- it); pv applies it, so it ends with one row per app, printed as a table.
CREATE TABLE clicks (
  click_id BIGINT,
  app_id   INT,
  user_id  INT
) WITH (
  'connector' = 'datagen',
  'number-of-rows' = '100000',
  'rows-per-second' = '0',
  'fields.click_id.kind' = 'sequence',
  'fields.click_id.start' = '1',
  'fields.click_id.end' = '100000',
  'fields.app_id.min' = '1',
  'fields.app_id.max' = '5',
  'fields.user_id.min' = '1',
  'fields.user_id.max' = '1000'
);

-- pv keeps its rows in the data directory and INSERT INTO appends to them,
-- so it is dropped first: running this file again on the same data
-- directory gives the same table, not every row twice.
DROP TABLE IF EXISTS pv;
CREATE TABLE pv (app_id INT, pv BIGINT, users BIGINT);

SET 'table.dml-sync' = 'true';

INSERT INTO pv
SELECT app_id, COUNT(*) AS pv, COUNT(DISTINCT user_id) AS users
FROM clicks
GROUP BY app_id;

SELECT * FROM pv ORDER BY app_id;

EXPLAIN SELECT app_id, COUNT(*) FROM clicks WHERE user_id > 10 GROUP BY app_id;
