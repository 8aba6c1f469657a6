package io.streamsql.bench.nexmark;

import java.nio.charset.StandardCharsets;

/**
 * The Nexmark events of connectors/nexmark (model.go), ported to Java: event
 * n is a function of the configuration and n alone (a splitmix64 stream
 * seeded from n), and this class draws the same numbers in the same order,
 * so both produce the same events. Go's unsigned arithmetic is spelled out
 * where Java's signed longs would differ (>>>, the high half of an unsigned
 * product). A change to model.go needs the same change here; the Go test
 * TestNexmarkJavaGeneratorMatchesGo (cmd/streamsql) compares the first
 * 10,000 events of both.
 */
public final class Generator {
    public static final int PERSON = 0, AUCTION = 1, BID = 2;
    /** The event time of event 0: 2024-01-01 00:00:00 UTC, in ms. */
    public static final long BASE_TIME = 1704067200000L;

    static final long FIRST_PERSON_ID = 1000, FIRST_AUCTION_ID = 1000, FIRST_CATEGORY_ID = 10;
    static final long NUM_CATEGORIES = 5, ID_LEAD = 10, NUM_ACTIVE_PEOPLE = 1000;
    static final long NUM_IN_FLIGHT_AUCTIONS = 100, HOT_GROUP = 100;
    static final long HOT_AUCTION_RATIO = 2, HOT_BIDDER_RATIO = 4, HOT_SELLER_RATIO = 4;
    static final int AVG_PERSON_SIZE = 200, AVG_AUCTION_SIZE = 500, AVG_BID_SIZE = 100;
    static final int NUM_CHANNELS = 10000;
    static final long RATE_PERIOD_MS = 600_000;
    static final long GOLDEN = 0x9e3779b97f4a7c15L;
    /** 6 ln 10 as Go's constant arithmetic rounds it (6*Math.log(10) is one ulp above). */
    static final double SIX_LN10 = 0x1.ba18a998fffap+3;

    static final byte[][] US_STATES = bytes("AZ", "CA", "ID", "OR", "WA", "WY");
    static final byte[][] US_CITIES = bytes("Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
            "Bend", "Redmond", "Seattle", "Kent", "Cheyenne");
    static final String[] FIRST_NAMES = {"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie",
            "Sarah", "Deiter", "Walter"};
    static final String[] LAST_NAMES = {"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith",
            "Jones", "Noris"};
    static final String[] HOT_CHANNELS = {"Google", "Facebook", "Baidu", "Apple"};

    private static byte[][] bytes(String... s) {
        byte[][] out = new byte[s.length][];
        for (int i = 0; i < s.length; i++) {
            out[i] = s[i].getBytes(StandardCharsets.UTF_8);
        }
        return out;
    }

    /** The options of the 'nexmark' table (connectors/nexmark/config.go). */
    public static final class Config implements java.io.Serializable {
        public long firstEventRate = 10000, nextEventRate = 10000, eventsNum = 0;
        public long personProportion = 1, auctionProportion = 3, bidProportion = 46;
    }

    /** One event; the fields of the kinds other than type keep stale values. */
    public static final class Event {
        public int type;
        public long dateTime;
        // person
        public long personId;
        public byte[] name, emailAddress, creditCard, city, state;
        // auction
        public long auctionId, initialBid, reserve, expires, seller, category;
        public byte[] itemName, description;
        // bid
        public long bidAuction, bidder, price;
        public byte[] channel, url;
        /** The kind's extra column: padding[extraOff, extraOff+extraLen). */
        public int extraOff, extraLen;
    }

    private final Config c;
    private final long total, half, period, ahead;

    public Generator(Config c) {
        this.c = c;
        total = c.personProportion + c.auctionProportion + c.bidProportion;
        half = c.firstEventRate * RATE_PERIOD_MS / 2000;
        period = half + c.nextEventRate * RATE_PERIOD_MS / 2000;
        ahead = NUM_IN_FLIGHT_AUCTIONS * total / c.auctionProportion;
    }

    public int kind(long n) {
        long off = n % total;
        if (off < c.personProportion) {
            return PERSON;
        }
        if (off < c.personProportion + c.auctionProportion) {
            return AUCTION;
        }
        return BID;
    }

    public long timestamp(long n) {
        long ms = n / period * RATE_PERIOD_MS;
        long r = n % period;
        long rate = c.firstEventRate;
        if (r >= half) {
            ms += RATE_PERIOD_MS / 2;
            r -= half;
            rate = c.nextEventRate;
        }
        return BASE_TIME + ms + r / rate * 1000 + r % rate * 1000 / rate;
    }

    long lastPerson(long n) {
        long p = c.personProportion;
        long epoch = n / total, off = n % total;
        if (off >= p) {
            off = p - 1;
        }
        return epoch * p + off;
    }

    long lastAuction(long n) {
        long p = c.personProportion, a = c.auctionProportion;
        long epoch = n / total, off = n % total;
        if (off < p) {
            return epoch * a - 1;
        }
        if (off < p + a) {
            return epoch * a + (off - p);
        }
        return epoch * a + a - 1;
    }

    long randomPerson(long n, Rng r) {
        long people = lastPerson(n) + 1;
        long active = Math.min(people, NUM_ACTIVE_PEOPLE);
        return people - active + r.intn(active + ID_LEAD);
    }

    long randomAuction(long n, Rng r) {
        long last = lastAuction(n);
        long first = Math.max(last - NUM_IN_FLIGHT_AUCTIONS, 0);
        return first + r.intn(last - first + 1 + ID_LEAD);
    }

    /** Sets e to event n; the fields of a kind not in kinds (a bit per kind) are not generated. */
    public void fill(long n, Event e, int kinds) {
        e.type = kind(n);
        e.dateTime = timestamp(n);
        if ((kinds & (1 << e.type)) == 0) {
            return;
        }
        Rng r = new Rng(mix(n * GOLDEN ^ 0x6a09e667f3bcc909L));
        switch (e.type) {
            case PERSON -> person(n, e, r);
            case AUCTION -> auction(n, e, r);
            default -> bid(n, e, r);
        }
    }

    private final Bytes buf = new Bytes();

    private void person(long n, Event e, Rng r) {
        e.personId = lastPerson(n) + FIRST_PERSON_ID;
        Bytes b = buf.reset();
        b.append(FIRST_NAMES[(int) r.intn(FIRST_NAMES.length)]);
        b.append((byte) ' ');
        b.append(LAST_NAMES[(int) r.intn(LAST_NAMES.length)]);
        e.name = b.take();
        appendWord(b, r, 7, (byte) ' ');
        b.append((byte) '@');
        appendWord(b, r, 5, (byte) ' ');
        b.append(".com");
        e.emailAddress = b.take();
        for (int i = 0; i < 4; i++) {
            if (i > 0) {
                b.append((byte) ' ');
            }
            long d = r.intn(10000);
            b.append((byte) ('0' + d / 1000));
            b.append((byte) ('0' + d / 100 % 10));
            b.append((byte) ('0' + d / 10 % 10));
            b.append((byte) ('0' + d % 10));
        }
        e.creditCard = b.take();
        e.city = US_CITIES[(int) r.intn(US_CITIES.length)];
        e.state = US_STATES[(int) r.intn(US_STATES.length)];
        int size = 8 + e.name.length + e.emailAddress.length + e.creditCard.length + e.city.length + e.state.length;
        extra(r, size, AVG_PERSON_SIZE, e);
    }

    private void auction(long n, Event e, Rng r) {
        e.auctionId = lastAuction(n) + FIRST_AUCTION_ID;
        if (r.intn(HOT_SELLER_RATIO) > 0) {
            e.seller = lastPerson(n) / HOT_GROUP * HOT_GROUP;
        } else {
            e.seller = randomPerson(n, r);
        }
        e.seller += FIRST_PERSON_ID;
        e.category = FIRST_CATEGORY_ID + r.intn(NUM_CATEGORIES);
        e.initialBid = price(r);
        long horizon = timestamp(n + ahead) - e.dateTime;
        e.expires = e.dateTime + 1 + r.intn(Math.max(2 * horizon, 1));
        Bytes b = buf.reset();
        appendWord(b, r, 20, (byte) ' ');
        e.itemName = b.take();
        appendWord(b, r, 100, (byte) ' ');
        e.description = b.take();
        e.reserve = e.initialBid + price(r);
        int size = 8 + e.itemName.length + e.description.length + 8 + 8 + 8 + 8 + 8;
        extra(r, size, AVG_AUCTION_SIZE, e);
    }

    private void bid(long n, Event e, Rng r) {
        if (r.intn(HOT_AUCTION_RATIO) > 0) {
            e.bidAuction = lastAuction(n) / HOT_GROUP * HOT_GROUP;
        } else {
            e.bidAuction = randomAuction(n, r);
        }
        e.bidAuction += FIRST_AUCTION_ID;
        if (r.intn(HOT_BIDDER_RATIO) > 0) {
            e.bidder = lastPerson(n) / HOT_GROUP * HOT_GROUP + 1;
        } else {
            e.bidder = randomPerson(n, r);
        }
        e.bidder += FIRST_PERSON_ID;
        e.price = price(r);
        if (r.intn(2) > 0) {
            int i = (int) r.intn(HOT_CHANNEL_NAMES.length);
            e.channel = HOT_CHANNEL_NAMES[i];
            e.url = HOT_CHANNEL_URLS[i];
        } else {
            int i = (int) r.intn(NUM_CHANNELS);
            e.channel = CHANNEL_NAMES[i];
            e.url = CHANNEL_URLS[i];
        }
        extra(r, 8 + 8 + 8 + 8, AVG_BID_SIZE, e);
    }

    static long price(Rng r) {
        return Math.round(StrictMath.exp(r.nextFloat() * SIX_LN10) * 100);
    }

    /** Appends 3 to max-1 characters: lowercase letters or, one time in 13, special; trims spaces. */
    static void appendWord(Bytes b, Rng r, long max, byte special) {
        int s = b.len;
        for (long n = 3 + r.intn(max - 3); n > 0; n--) {
            long x = r.next();
            if (((x >>> 32) * 13) >>> 32 == 0) {
                b.append(special);
            } else {
                b.append((byte) ('a' + (x & 0xffffffffL) % 26));
            }
        }
        if (special != ' ') {
            return;
        }
        int end = b.len;
        while (end > s && b.a[end - 1] == ' ') {
            end--;
        }
        int k = s;
        while (k < end && b.a[k] == ' ') {
            k++;
        }
        System.arraycopy(b.a, k, b.a, s, end - k);
        b.len = s + (end - k);
    }

    static void extra(Rng r, int size, int avg, Event e) {
        if (size > avg) {
            e.extraOff = 0;
            e.extraLen = 0;
            return;
        }
        int want = avg - size;
        int delta = (int) Math.round(want * 0.2);
        int n = want - delta;
        if (delta > 0) {
            n += (int) r.intn(2L * delta);
        }
        e.extraOff = (int) r.intn(PADDING.length - n);
        e.extraLen = n;
    }

    /** The text the extra columns are cut from. */
    public static final byte[] PADDING = padding();

    private static byte[] padding() {
        Rng r = new Rng(0x243f6a8885a308d3L);
        byte[] b = new byte[1 << 16];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) ('a' + r.intn(26));
        }
        return b;
    }

    static final byte[][] CHANNEL_NAMES = new byte[NUM_CHANNELS][], CHANNEL_URLS = new byte[NUM_CHANNELS][];
    static final byte[][] HOT_CHANNEL_NAMES = new byte[HOT_CHANNELS.length][];
    static final byte[][] HOT_CHANNEL_URLS = new byte[HOT_CHANNELS.length][];

    static {
        for (int i = 0; i < NUM_CHANNELS; i++) {
            CHANNEL_NAMES[i] = ("channel-" + i).getBytes(StandardCharsets.UTF_8);
            CHANNEL_URLS[i] = url(i);
        }
        for (int i = 0; i < HOT_CHANNELS.length; i++) {
            HOT_CHANNEL_NAMES[i] = HOT_CHANNELS[i].getBytes(StandardCharsets.UTF_8);
            HOT_CHANNEL_URLS[i] = url(NUM_CHANNELS + i);
        }
    }

    private static byte[] url(long seed) {
        Rng r = new Rng(mix(seed * GOLDEN ^ 0xbb67ae8584caa73bL));
        Bytes b = new Bytes();
        b.append("https://www.nexmark.com/");
        for (int i = 0; i < 3; i++) {
            appendWord(b, r, 5, (byte) '_');
            b.append((byte) '/');
        }
        b.append("item.htm?query=1");
        if (seed < NUM_CHANNELS && r.intn(10) > 0) {
            long id = Integer.reverse((int) seed);
            b.append("&channel_id=");
            b.append(Long.toString(Math.abs(id)));
        }
        return b.take();
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** A splitmix64 stream. */
    static final class Rng {
        long s;

        Rng(long s) {
            this.s = s;
        }

        long next() {
            s += GOLDEN;
            return mix(s);
        }

        /** A number in [0, n) for n > 0: the high half of the unsigned 128-bit product next()*n. */
        long intn(long n) {
            long x = next();
            return Math.multiplyHigh(x, n) + ((x >> 63) & n) + ((n >> 63) & x);
        }

        double nextFloat() {
            return (next() >>> 11) * 0x1p-53;
        }
    }

    /** A growable byte buffer whose take() returns and clears what was appended. */
    static final class Bytes {
        byte[] a = new byte[256];
        int len;

        Bytes reset() {
            len = 0;
            return this;
        }

        void append(byte c) {
            if (len == a.length) {
                a = java.util.Arrays.copyOf(a, 2 * len);
            }
            a[len++] = c;
        }

        void append(String s) {
            for (int i = 0; i < s.length(); i++) {
                append((byte) s.charAt(i));
            }
        }

        byte[] take() {
            byte[] out = java.util.Arrays.copyOf(a, len);
            len = 0;
            return out;
        }
    }
}
