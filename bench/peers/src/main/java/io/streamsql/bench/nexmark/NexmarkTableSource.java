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
 * row of the declared columns by {@link Generator}. The columns are Flink
 * nexmark's: event_type INT and the ROW columns person, auction and bid
 * (NULL for events of the other kinds). The planner pushes the projection
 * down (whole columns), so only the columns a query reads are built, and
 * only the kinds of event they belong to are generated. DataGeneratorSource
 * splits the numbers into one contiguous range per subtask (streamsql deals
 * them round-robin); at parallelism 1 both read them in order.
 */
final class NexmarkTableSource implements ScanTableSource, SupportsProjectionPushDown {
    /** The columns of the table, by name, as Flink nexmark names them. */
    static final List<String> COLUMNS = List.of("event_type", "person", "auction", "bid");

    /**
     * The fields of the person, auction and bid rows, in Flink nexmark's
     * order. A field's code is its kind's first code (1, 9, 19) plus its
     * position.
     */
    static final List<List<String>> FIELDS = List.of(
            List.of("id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra"),
            List.of("id", "itemName", "description", "initialBid", "reserve", "dateTime", "expires", "seller",
                    "category", "extra"),
            List.of("auction", "bidder", "price", "channel", "url", "dateTime", "extra"));

    private static final int[] FIRST_CODE = {1, 9, 19};

    private final Generator.Config config;
    private DataType produced;

    NexmarkTableSource(Generator.Config config, DataType produced) {
        this.config = config;
        this.produced = produced;
        columns(produced);
    }

    /**
     * The columns of produced: for each, -1 for event_type, else the codes
     * of the declared fields of its row (any of them, in any order).
     */
    static int[][] columns(DataType produced) {
        List<String> names = DataType.getFieldNames(produced);
        List<DataType> types = DataType.getFieldDataTypes(produced);
        int[][] cols = new int[names.size()][];
        for (int i = 0; i < cols.length; i++) {
            int c = COLUMNS.indexOf(names.get(i));
            if (c < 0) {
                throw new ValidationException("the nexmark table has no column " + names.get(i));
            }
            if (c == 0) {
                cols[i] = null;
                continue;
            }
            List<String> fields = DataType.getFieldNames(types.get(i));
            cols[i] = new int[fields.size()];
            for (int k = 0; k < fields.size(); k++) {
                int f = FIELDS.get(c - 1).indexOf(fields.get(k));
                if (f < 0) {
                    throw new ValidationException("the nexmark column " + names.get(i) + " has no field " + fields.get(k));
                }
                cols[i][k] = FIRST_CODE[c - 1] + f;
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

    /** Event number -> row of the columns cols (see {@link #columns}). */
    static final class Rows implements GeneratorFunction<Long, RowData> {
        private final Generator.Config config;
        private final int[][] cols;
        private final int kinds;
        private transient Generator gen;
        private transient Generator.Event e;

        Rows(Generator.Config config, int[][] cols) {
            this.config = config;
            this.cols = cols;
            int k = 0;
            for (int[] fields : cols) {
                if (fields != null) {
                    for (int c : fields) {
                        k |= kindBits(c);
                    }
                }
            }
            kinds = k;
        }

        /** The kinds of event field c needs generated (none: the time only). */
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
                int[] fields = cols[i];
                if (fields == null) {
                    row.setField(i, e.type);
                    continue;
                }
                if (fields.length == 0 || kindOf(fields[0]) != e.type) {
                    continue; // NULL: an event of another kind
                }
                GenericRowData r = new GenericRowData(fields.length);
                for (int k = 0; k < fields.length; k++) {
                    r.setField(k, value(fields[k]));
                }
                row.setField(i, r);
            }
            return row;
        }

        private static int kindOf(int c) {
            return c <= 8 ? Generator.PERSON : c <= 18 ? Generator.AUCTION : Generator.BID;
        }

        private Object value(int c) {
            return switch (c) {
                case 1 -> e.personId;
                case 2 -> StringData.fromBytes(e.name);
                case 3 -> StringData.fromBytes(e.emailAddress);
                case 4 -> StringData.fromBytes(e.creditCard);
                case 5 -> StringData.fromBytes(e.city);
                case 6 -> StringData.fromBytes(e.state);
                case 7, 14, 24 -> TimestampData.fromEpochMillis(e.dateTime);
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
                default -> throw new IllegalStateException("field " + c);
            };
        }
    }
}
