-- Nexmark q12, processing-time windows: how many bids each bidder makes
-- in each 10 seconds of processing time (the wall clock when the bid was
-- read). The view adds the processing-time attribute p_time to bid; the
-- nexmark table declares a WATERMARK on its event time, which these
-- windows do not use.
CREATE TABLE nexmark_q12 (
    bidder BIGINT,
    bid_count BIGINT,
    starttime TIMESTAMP(3),
    endtime TIMESTAMP(3)
) WITH ('connector' = 'blackhole');

CREATE VIEW B AS SELECT *, PROCTIME() AS p_time FROM bid;

INSERT INTO nexmark_q12
SELECT
    bidder,
    COUNT(*) AS bid_count,
    window_start AS starttime,
    window_end AS endtime
FROM TABLE(TUMBLE(TABLE B, DESCRIPTOR(p_time), INTERVAL '10' SECOND))
GROUP BY bidder, window_start, window_end;
