package io.streamsql.bench;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * kafkabench's Flink SQL contender: the job streamsql runs, in Flink 2.2.1
 * SQL on a local MiniCluster (a TableEnvironment in streaming mode started
 * from this main, so the whole cluster is this one JVM):
 *
 * <pre>
 * INSERT INTO pv SELECT app_id, COUNT(*) AS pv FROM clicks GROUP BY app_id
 * </pre>
 *
 * from a kafka table (json, read from the earliest offset up to the latest
 * offsets at the start, 'scan.bounded.mode' = 'latest-offset', so the job
 * ends) into an upsert-kafka table with 'sink.delivery-guarantee' =
 * 'exactly-once'; 1 s exactly-once checkpoints into CHECKPOINT_DIR, the
 * RocksDB state backend, parallelism 2, and mini-batches of 1 s or 50,000
 * rows, as the streamsql job. Every other setting is Flink's default.
 *
 * <p>Usage: {@code FlinkSqlCount BOOTSTRAP NAME INPUT OUTPUT CHECKPOINT_DIR}
 * (NAME: the consumer group and the transactional id prefix). It exits with
 * status 0 once the job has finished, with 1 if it failed.
 *
 * <p>{@code FlinkSqlCount BOOTSTRAP NAME INPUT OUTPUT CHECKPOINT_DIR pass
 * GUARANTEE INTERVAL_MS} runs kafkabench's latency job instead: every
 * click's {@code click_id} and {@code pt} (its produce time) passed through
 * from the kafka table, read from the earliest offset and unbounded, to a
 * kafka table (json) with 'sink.delivery-guarantee' = GUARANTEE
 * (exactly-once or at-least-once, and the checkpointing mode to match),
 * checkpoints every INTERVAL_MS; no mini-batches (there is no aggregation).
 * It runs until it is killed.
 */
public final class FlinkSqlCount {
    private FlinkSqlCount() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 5 && !(args.length == 8 && args[5].equals("pass"))) {
            System.err.println("usage: FlinkSqlCount BOOTSTRAP NAME INPUT OUTPUT CHECKPOINT_DIR [pass GUARANTEE INTERVAL_MS]");
            System.exit(2);
        }
        String bootstrap = args[0], name = args[1], input = args[2], output = args[3], chkDir = args[4];
        if (args.length == 8) {
            passThrough(bootstrap, name, input, output, chkDir, args[6], args[7]);
            return;
        }

        Configuration conf = new Configuration();
        conf.setString("parallelism.default", "2");
        conf.setString("execution.checkpointing.interval", "1s");
        conf.setString("execution.checkpointing.mode", "EXACTLY_ONCE");
        conf.setString("execution.checkpointing.dir", "file://" + chkDir);
        conf.setString("state.backend.type", "rocksdb");
        conf.setString("pipeline.name", name);
        // The same mini-batches as the streamsql job (bench/kafkabench/streamsql.go).
        conf.setString("table.exec.mini-batch.enabled", "true");
        conf.setString("table.exec.mini-batch.allow-latency", "1 s");
        conf.setString("table.exec.mini-batch.size", "50000");
        TableEnvironment env = TableEnvironment.create(
                EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());

        env.executeSql(String.format("""
                CREATE TABLE clicks (
                  click_id BIGINT,
                  app_id   STRING,
                  user_id  BIGINT,
                  ts       TIMESTAMP(3)
                ) WITH (
                  'connector' = 'kafka',
                  'topic' = '%s',
                  'properties.bootstrap.servers' = '%s',
                  'properties.group.id' = '%s',
                  'scan.startup.mode' = 'earliest-offset',
                  'scan.bounded.mode' = 'latest-offset',
                  'format' = 'json'
                )""", input, bootstrap, name));
        // The broker refuses a transaction timeout above its
        // transaction.max.timeout.ms (15 min by default); Flink's default
        // is one hour, so the sink names one, as Flink's documentation says.
        env.executeSql(String.format("""
                CREATE TABLE pv (
                  app_id STRING,
                  pv     BIGINT,
                  PRIMARY KEY (app_id) NOT ENFORCED
                ) WITH (
                  'connector' = 'upsert-kafka',
                  'topic' = '%s',
                  'properties.bootstrap.servers' = '%s',
                  'properties.transaction.timeout.ms' = '60000',
                  'key.format' = 'json',
                  'value.format' = 'json',
                  'sink.delivery-guarantee' = 'exactly-once',
                  'sink.transactional-id-prefix' = '%s'
                )""", output, bootstrap, name));
        TableResult r = env.executeSql("INSERT INTO pv SELECT app_id, COUNT(*) AS pv FROM clicks GROUP BY app_id");
        System.out.println("flink: job submitted");
        r.await();
        System.out.println("flink: job finished");
        System.exit(0);
    }

    /** The latency job (see the class comment); it never returns. */
    private static void passThrough(String bootstrap, String name, String input, String output, String chkDir,
            String guarantee, String intervalMs) throws Exception {
        if (!guarantee.equals("exactly-once") && !guarantee.equals("at-least-once")) {
            System.err.println("GUARANTEE must be exactly-once or at-least-once");
            System.exit(2);
        }
        Configuration conf = new Configuration();
        conf.setString("parallelism.default", "2");
        conf.setString("execution.checkpointing.interval", intervalMs + "ms");
        conf.setString("execution.checkpointing.mode", guarantee.equals("exactly-once") ? "EXACTLY_ONCE" : "AT_LEAST_ONCE");
        conf.setString("execution.checkpointing.dir", "file://" + chkDir);
        conf.setString("state.backend.type", "rocksdb");
        conf.setString("pipeline.name", name);
        TableEnvironment env = TableEnvironment.create(
                EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
        env.executeSql(String.format("""
                CREATE TABLE clicks (
                  click_id BIGINT,
                  app_id   STRING,
                  user_id  BIGINT,
                  ts       TIMESTAMP(3),
                  pt       BIGINT
                ) WITH (
                  'connector' = 'kafka',
                  'topic' = '%s',
                  'properties.bootstrap.servers' = '%s',
                  'properties.group.id' = '%s',
                  'scan.startup.mode' = 'earliest-offset',
                  'format' = 'json'
                )""", input, bootstrap, name));
        env.executeSql(String.format("""
                CREATE TABLE passed (
                  click_id BIGINT,
                  pt       BIGINT
                ) WITH (
                  'connector' = 'kafka',
                  'topic' = '%s',
                  'properties.bootstrap.servers' = '%s',
                  'properties.transaction.timeout.ms' = '60000',
                  'format' = 'json',
                  'sink.delivery-guarantee' = '%s',
                  'sink.transactional-id-prefix' = '%s'
                )""", output, bootstrap, guarantee, name));
        TableResult r = env.executeSql("INSERT INTO passed SELECT click_id, pt FROM clicks");
        System.out.println("flink: job submitted");
        r.await();
        System.out.println("flink: job finished");
        System.exit(0);
    }
}
