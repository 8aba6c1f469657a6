package io.streamsql.bench.nexmark;

import java.util.Set;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;

/**
 * The table connector 'nexmark' with the options of streamsql's
 * (connectors/nexmark/config.go), so bench/nexmark/ddl.sql runs unchanged.
 * Only 'max-emit-speed' = 'true' (as fast as possible) is supported.
 */
public final class NexmarkTableFactory implements DynamicTableSourceFactory {
    static final ConfigOption<Long> FIRST_EVENT_RATE = ConfigOptions.key("first-event.rate").longType().defaultValue(10000L);
    static final ConfigOption<Long> NEXT_EVENT_RATE = ConfigOptions.key("next-event.rate").longType().defaultValue(10000L);
    static final ConfigOption<Long> EVENTS_NUM = ConfigOptions.key("events.num").longType().defaultValue(0L);
    static final ConfigOption<Long> PERSON_PROPORTION = ConfigOptions.key("person.proportion").longType().defaultValue(1L);
    static final ConfigOption<Long> AUCTION_PROPORTION = ConfigOptions.key("auction.proportion").longType().defaultValue(3L);
    static final ConfigOption<Long> BID_PROPORTION = ConfigOptions.key("bid.proportion").longType().defaultValue(46L);
    static final ConfigOption<Boolean> MAX_EMIT_SPEED = ConfigOptions.key("max-emit-speed").booleanType().defaultValue(true);

    @Override
    public String factoryIdentifier() {
        return "nexmark";
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of();
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of(FIRST_EVENT_RATE, NEXT_EVENT_RATE, EVENTS_NUM, PERSON_PROPORTION, AUCTION_PROPORTION,
                BID_PROPORTION, MAX_EMIT_SPEED);
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        helper.validate();
        ReadableConfig o = helper.getOptions();
        if (!o.get(MAX_EMIT_SPEED)) {
            throw new ValidationException("'max-emit-speed' = 'false' is not supported here");
        }
        Generator.Config c = new Generator.Config();
        c.firstEventRate = o.get(FIRST_EVENT_RATE);
        c.nextEventRate = o.get(NEXT_EVENT_RATE);
        c.eventsNum = o.get(EVENTS_NUM);
        c.personProportion = o.get(PERSON_PROPORTION);
        c.auctionProportion = o.get(AUCTION_PROPORTION);
        c.bidProportion = o.get(BID_PROPORTION);
        return new NexmarkTableSource(c, context.getPhysicalRowDataType());
    }
}
