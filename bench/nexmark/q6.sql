-- Nexmark q6, average selling price per seller: the average of the winning
-- bids of each seller's last 10 auctions (an OVER window over the updating
-- result of a TopN). Flink does not run it either: its OVER aggregation
-- takes no retractions.
CREATE TABLE nexmark_q6 (
    seller VARCHAR,
    avg_price BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO nexmark_q6
SELECT
    Q.seller,
    AVG(Q.price) OVER
        (PARTITION BY Q.seller ORDER BY Q.`dateTime` ROWS BETWEEN 10 PRECEDING AND CURRENT ROW)
FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY A.id, A.seller ORDER BY B.price DESC) AS rownum
    FROM (SELECT A.id, A.seller, B.price, B.`dateTime`
        FROM auction AS A,
            bid AS B
        WHERE A.id = B.auction
            AND B.`dateTime` BETWEEN A.`dateTime` AND A.expires)
    WHERE rownum <= 1
) AS Q;
