-- A bounded pipeline: a memory table filled by INSERT, a query over it, and
-- a job writing an aggregate to a print sink. The run must print the query's
-- table and the sink's rows, then end by itself with status 0.
CREATE TABLE orders (id BIGINT, customer STRING, amount DOUBLE);

-- Wait for the INSERT so that the SELECT below sees its rows.
SET 'table.dml-sync' = 'true';
INSERT INTO orders VALUES
  (1, 'alice', 10.5),
  (2, 'bob', 3.0),
  (3, 'alice', 1.5),
  (4, NULL, 2.0);
RESET 'table.dml-sync';

SELECT customer, COUNT(*) AS orders, SUM(amount) AS total
FROM orders
GROUP BY customer;

CREATE TABLE totals (customer STRING, orders BIGINT) WITH ('connector' = 'print');

-- A background job: streamsql waits for it after the last statement.
INSERT INTO totals SELECT customer, COUNT(*) FROM orders GROUP BY customer;
