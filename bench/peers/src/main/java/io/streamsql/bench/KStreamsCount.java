package io.streamsql.bench;

import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * kafkabench's Kafka Streams contender: counts the records of the input
 * topic by their key (the app id) in a persistent key-value store (RocksDB,
 * the default) and writes {"app_id":"app-N","pv":count} keyed by the app id
 * to the output topic, with processing.guarantee=exactly_once_v2 and
 * commit.interval.ms=1000. Every other setting is Kafka Streams' default
 * (one stream thread, a 10 MiB record cache).
 *
 * <p>Usage: {@code KStreamsCount BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR
 * [pass GUARANTEE INTERVAL_MS]}. With {@code pass} it runs kafkabench's
 * latency job instead: every record of INPUT passed through unchanged to
 * OUTPUT, with processing.guarantee GUARANTEE (exactly_once_v2 or
 * at_least_once) and commit.interval.ms INTERVAL_MS.
 * It runs until it is stopped: kafkabench stops it once a read_committed
 * consumer of OUTPUT has seen the true count of every app id. It prints
 * "kstreams: running" once the instance is in state RUNNING, and exits with
 * status 1 if the instance fails.
 */
public final class KStreamsCount {
    private KStreamsCount() {}

    public static void main(String[] args) throws InterruptedException {
        boolean pass = args.length == 8 && args[5].equals("pass");
        if (args.length != 5 && !pass) {
            System.err.println("usage: KStreamsCount BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR [pass GUARANTEE INTERVAL_MS]");
            System.exit(2);
        }
        String bootstrap = args[0], appId = args[1], input = args[2], output = args[3], stateDir = args[4];

        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, pass ? args[6] : StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, pass ? Integer.parseInt(args[7]) : 1000);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        // The input is read from its start, as every contender reads it.
        props.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");

        StreamsBuilder builder = new StreamsBuilder();
        if (pass) {
            builder.stream(input, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
                    .to(output, Produced.with(Serdes.ByteArray(), Serdes.ByteArray()));
        } else {
            builder.stream(input, Consumed.with(Serdes.String(), Serdes.ByteArray()))
                    .groupByKey()
                    .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("pv-counts"))
                    .toStream()
                    .mapValues((app, pv) -> ("{\"app_id\":\"" + app + "\",\"pv\":" + pv + "}").getBytes(StandardCharsets.UTF_8))
                    .to(output, Produced.with(Serdes.String(), Serdes.ByteArray()));
        }

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        CountDownLatch stopped = new CountDownLatch(1);
        int[] status = {0};
        streams.setUncaughtExceptionHandler(e -> {
            System.err.println("kstreams: failed: " + e);
            e.printStackTrace();
            status[0] = 1;
            stopped.countDown();
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.setStateListener((now, before) -> {
            if (now == KafkaStreams.State.RUNNING) {
                System.out.println("kstreams: running");
            }
            if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) {
                stopped.countDown();
            }
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            stopped.countDown();
        }));
        streams.start();
        stopped.await();
        streams.close();
        System.exit(status[0]);
    }
}
