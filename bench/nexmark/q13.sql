-- Nexmark q13, bounded side input join: each bid enriched with the value
-- of its auction id modulo 10,000 from a file (a processing-time lookup
-- join). Flink nexmark reads ${FLINK_HOME}/data/side_input.txt; here
-- /tmp/nexmark_side_input.txt.
CREATE TABLE side_input (
    key BIGINT,
    `value` VARCHAR
) WITH (
    'connector' = 'filesystem',
    'path' = 'file:///tmp/nexmark_side_input.txt',
    'format' = 'csv'
);

CREATE TABLE nexmark_q13 (
    auction BIGINT,
    bidder BIGINT,
    price BIGINT,
    `dateTime` TIMESTAMP(3),
    `value` VARCHAR
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q13
SELECT
    B.auction,
    B.bidder,
    B.price,
    B.`dateTime`,
    S.`value`
FROM (SELECT *, PROCTIME() AS p_time FROM bid) B
JOIN side_input FOR SYSTEM_TIME AS OF B.p_time AS S
ON MOD(B.auction, 10000) = S.key;
