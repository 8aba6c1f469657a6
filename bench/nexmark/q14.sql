-- Nexmark q14, calculation: bids within a price range, with the time of
-- day they were made and how many times 'c' occurs in their extra, counted
-- by the user-defined function count_char, as Flink nexmark writes it. Its
-- Java class (com.github.nexmark.flink.udf.CountChar) is here a WebAssembly
-- module built from examples/udf/count_char (examples/udf/build.sh DIR);
-- the benchmark builds it into its run's directory and points the path
-- there, and runs Flink with the Java class of bench/peers.
CREATE FUNCTION count_char AS '/tmp/nexmark_udf/count_char.wasm' LANGUAGE WASM;

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
    count_char(extra, 'c') AS c_counts
FROM bid
WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000;
