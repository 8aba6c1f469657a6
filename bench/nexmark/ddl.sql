-- The Nexmark source and its three views, as Flink nexmark's ddl_gen.sql
-- and ddl_views.sql. Run it before any query file (the catalog persists in
-- the data directory):
--
--   streamsql --data-dir D -f bench/nexmark/ddl.sql
--   streamsql --data-dir D -f bench/nexmark/q5.sql
--
-- Flink's table has ROW columns person, auction and bid; ours has them
-- flattened (docs/DIALECT.md, "Nexmark"), and the event time date_time is
-- a column of the source rather than a CASE over the three rows. The views
-- give the queries Flink's names. 'events.num' is the size of the run.

CREATE TABLE nexmark (
    event_type INT,
    person_id BIGINT,
    person_name VARCHAR,
    person_email_address VARCHAR,
    person_credit_card VARCHAR,
    person_city VARCHAR,
    person_state VARCHAR,
    person_date_time TIMESTAMP(3),
    person_extra VARCHAR,
    auction_id BIGINT,
    auction_item_name VARCHAR,
    auction_description VARCHAR,
    auction_initial_bid BIGINT,
    auction_reserve BIGINT,
    auction_date_time TIMESTAMP(3),
    auction_expires TIMESTAMP(3),
    auction_seller BIGINT,
    auction_category BIGINT,
    auction_extra VARCHAR,
    bid_auction BIGINT,
    bid_bidder BIGINT,
    bid_price BIGINT,
    bid_channel VARCHAR,
    bid_url VARCHAR,
    bid_date_time TIMESTAMP(3),
    bid_extra VARCHAR,
    date_time TIMESTAMP(3),
    WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'first-event.rate' = '10000000',
    'next-event.rate' = '10000000',
    'events.num' = '1000000',
    'person.proportion' = '1',
    'auction.proportion' = '3',
    'bid.proportion' = '46'
);

CREATE VIEW person AS
SELECT
    person_id AS id,
    person_name AS name,
    person_email_address AS emailAddress,
    person_credit_card AS creditCard,
    person_city AS city,
    person_state AS state,
    date_time AS `dateTime`,
    person_extra AS extra
FROM nexmark WHERE event_type = 0;

CREATE VIEW auction AS
SELECT
    auction_id AS id,
    auction_item_name AS itemName,
    auction_description AS description,
    auction_initial_bid AS initialBid,
    auction_reserve AS reserve,
    date_time AS `dateTime`,
    auction_expires AS expires,
    auction_seller AS seller,
    auction_category AS category,
    auction_extra AS extra
FROM nexmark WHERE event_type = 1;

CREATE VIEW bid AS
SELECT
    bid_auction AS auction,
    bid_bidder AS bidder,
    bid_price AS price,
    bid_channel AS channel,
    bid_url AS url,
    date_time AS `dateTime`,
    bid_extra AS extra
FROM nexmark WHERE event_type = 2;
