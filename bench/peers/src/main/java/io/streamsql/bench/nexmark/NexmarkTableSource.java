package io.streamsql.bench.nexmark;

import java.util.List;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.SourceProvider;
import org.apache.flink.table.connector.source.abilities.SupportsProjectionPushDown;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.DataType;

/**
 * A bounded source of the first 'events.num' Nexmark events: Flink's
 * DataGeneratorSource (FLIP-27) over the event numbers, each turned into a
 * row of the declared columns by {@link Generator}. The planner pushes the
 * projection down, so only the columns a query reads are built, and only
 * the kinds of event they belong to are generated, as connectors/nexmark
 * does. DataGeneratorSource splits the numbers into one contiguous range
 * per subtask (streamsql deals them round-robin); at parallelism 1 both
 * read them in order.
 */
final class NexmarkTableSource implements ScanTableSource, SupportsProjectionPushDown {
    /** The columns of the table, by name, as connectors/nexmark names them. */
    static final List<String> COLUMNS = List.of(
            "event_type",
            "person_id", "person_name", "person_email_address", "person_credit_card", "person_city",
            "person_state", "person_date_time", "person_extra",
            "auction_id", "auction_item_name", "auction_description", "auction_initial_bid", "auction_reserve",
            "auction_date_time", "auction_expires", "auction_seller", "auction_category", "auction_extra",
            "bid_auction", "bid_bidder", "bid_price", "bid_channel", "bid_url", "bid_date_time", "bid_extra",
            "date_time");

    private final Generator.Config config;
    private DataType produced;

    NexmarkTableSource(Generator.Config config, DataType produced) {
        this.config = config;
        this.produced = produced;
        columns(produced);
    }

    static int[] columns(DataType produced) {
        List<String> names = DataType.getFieldNames(produced);
        int[] cols = new int[names.size()];
        for (int i = 0; i < cols.length; i++) {
            cols[i] = COLUMNS.indexOf(names.get(i));
            if (cols[i] < 0) {
                throw new ValidationException("the nexmark table has no column " + names.get(i));
            }
        }
        return cols;
    }

    @Override
    public ChangelogMode getChangelogMode() {
        return ChangelogMode.insertOnly();
    }

    @Override
    @SuppressWarnings("unchecked")
    public ScanRuntimeProvider getScanRuntimeProvider(ScanContext ctx) {
        TypeInformation<RowData> type = (TypeInformation<RowData>) (TypeInformation<?>) ctx.createTypeInformation(produced);
        long count = config.eventsNum > 0 ? config.eventsNum : Long.MAX_VALUE;
        return SourceProvider.of(new DataGeneratorSource<>(new Rows(config, columns(produced)), count, type));
    }

    @Override
    public boolean supportsNestedProjection() {
        return false;
    }

    @Override
    public void applyProjection(int[][] projectedFields, DataType producedDataType) {
        produced = producedDataType;
    }

    @Override
    public DynamicTableSource copy() {
        return new NexmarkTableSource(config, produced);
    }

    @Override
    public String asSummaryString() {
        return "nexmark";
    }

    /** Event number -> row of the columns cols (indexes into COLUMNS). */
    static final class Rows implements GeneratorFunction<Long, RowData> {
        private final Generator.Config config;
        private final int[] cols;
        private final int kinds;
        private transient Generator gen;
        private transient Generator.Event e;

        Rows(Generator.Config config, int[] cols) {
            this.config = config;
            this.cols = cols;
            int k = 0;
            for (int c : cols) {
                k |= kindBits(c);
            }
            kinds = k;
        }

        /** The kinds of event column c needs generated (none: type and time only). */
        static int kindBits(int c) {
            if (c >= 1 && c <= 8 && c != 7) {
                return 1 << Generator.PERSON;
            }
            if (c >= 9 && c <= 18 && c != 14) {
                return 1 << Generator.AUCTION;
            }
            if (c >= 19 && c <= 25 && c != 24) {
                return 1 << Generator.BID;
            }
            return 0;
        }

        @Override
        public void open(SourceReaderContext readerContext) {
            gen = new Generator(config);
            e = new Generator.Event();
        }

        @Override
        public RowData map(Long n) {
            gen.fill(n, e, kinds);
            GenericRowData row = new GenericRowData(cols.length);
            for (int i = 0; i < cols.length; i++) {
                row.setField(i, value(cols[i]));
            }
            return row;
        }

        private Object value(int c) {
            int kind = c == 0 || c == 26 ? -1 : c <= 8 ? Generator.PERSON : c <= 18 ? Generator.AUCTION : Generator.BID;
            if (kind >= 0 && kind != e.type) {
                return null;
            }
            return switch (c) {
                case 0 -> e.type;
                case 1 -> e.personId;
                case 2 -> StringData.fromBytes(e.name);
                case 3 -> StringData.fromBytes(e.emailAddress);
                case 4 -> StringData.fromBytes(e.creditCard);
                case 5 -> StringData.fromBytes(e.city);
                case 6 -> StringData.fromBytes(e.state);
                case 7, 14, 24, 26 -> TimestampData.fromEpochMillis(e.dateTime);
                case 8, 18, 25 -> StringData.fromBytes(Generator.PADDING, e.extraOff, e.extraLen);
                case 9 -> e.auctionId;
                case 10 -> StringData.fromBytes(e.itemName);
                case 11 -> StringData.fromBytes(e.description);
                case 12 -> e.initialBid;
                case 13 -> e.reserve;
                case 15 -> TimestampData.fromEpochMillis(e.expires);
                case 16 -> e.seller;
                case 17 -> e.category;
                case 19 -> e.bidAuction;
                case 20 -> e.bidder;
                case 21 -> e.price;
                case 22 -> StringData.fromBytes(e.channel);
                case 23 -> StringData.fromBytes(e.url);
                default -> throw new IllegalStateException("column " + c);
            };
        }
    }
}
