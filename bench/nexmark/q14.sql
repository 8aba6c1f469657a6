-- Nexmark q14, calculation: bids within a price range, with the time of
-- day they were made and how many times 'c' occurs in their extra.
-- Flink nexmark counts it with a Java UDF (CREATE FUNCTION count_char AS
-- 'com.github.nexmark.flink.udf.CountChar'); there are no user-defined
-- functions here, so count_char(extra, 'c') is written with built-ins
-- that compute the same: the length of extra less its length without 'c'.
CREATE TABLE nexmark_q14 (
    auction BIGINT,
    bidder BIGINT,
    price DECIMAL(23, 3),
    bidTimeType VARCHAR,
    `dateTime` TIMESTAMP(3),
    extra VARCHAR,
    c_counts BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q14
SELECT
    auction,
    bidder,
    0.908 * price AS price,
    CASE
        WHEN HOUR(`dateTime`) >= 8 AND HOUR(`dateTime`) <= 18 THEN 'dayTime'
        WHEN HOUR(`dateTime`) <= 6 OR HOUR(`dateTime`) >= 20 THEN 'nightTime'
        ELSE 'otherTime'
    END AS bidTimeType,
    `dateTime`,
    extra,
    CHAR_LENGTH(extra) - CHAR_LENGTH(REPLACE(extra, 'c', '')) AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
