package io.streamsql.bench.nexmark;

import java.io.BufferedOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * The Flink side of `streamsql bench nexmark`: a query of bench/nexmark in
 * Flink 2.2.1 SQL on a local MiniCluster (a TableEnvironment in streaming
 * mode started from this main, so the whole cluster is this one JVM).
 *
 * <pre>
 * NexmarkSql run DDL.sql QUERY.sql PARALLELISM CHECKPOINT_DIR
 * NexmarkSql csv N FIRST_RATE NEXT_RATE PERSON AUCTION BID
 * </pre>
 *
 * run: the statements of DDL.sql (bench/nexmark/ddl.sql: the 'nexmark'
 * table is {@link NexmarkTableFactory}) and then of QUERY.sql, with RocksDB
 * state, 10 s exactly-once checkpoints into CHECKPOINT_DIR (the last one
 * retained when the job ends), and the settings of Flink nexmark's
 * flink-conf.yaml that apply (mini-batches of 2 s / 50,000 rows, object
 * reuse); it exits with status 0 once the job has finished. csv: events 0
 * to N-1 as lines of comma-separated fields, to compare with the Go
 * generator's.
 */
public final class NexmarkSql {
    private NexmarkSql() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 5 && args[0].equals("run")) {
            run(Path.of(args[1]), Path.of(args[2]), Integer.parseInt(args[3]), args[4]);
        } else if (args.length == 7 && args[0].equals("csv")) {
            Generator.Config c = new Generator.Config();
            c.firstEventRate = Long.parseLong(args[2]);
            c.nextEventRate = Long.parseLong(args[3]);
            c.personProportion = Long.parseLong(args[4]);
            c.auctionProportion = Long.parseLong(args[5]);
            c.bidProportion = Long.parseLong(args[6]);
            csv(c, Long.parseLong(args[1]));
        } else {
            System.err.println("usage: NexmarkSql run DDL.sql QUERY.sql PARALLELISM CHECKPOINT_DIR\n"
                    + "       NexmarkSql csv N FIRST_RATE NEXT_RATE PERSON AUCTION BID");
            System.exit(2);
        }
        System.exit(0);
    }

    static void run(Path ddl, Path query, int parallelism, String chkDir) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("parallelism.default", Integer.toString(parallelism));
        conf.setString("execution.checkpointing.interval", "10s");
        conf.setString("execution.checkpointing.mode", "EXACTLY_ONCE");
        conf.setString("execution.checkpointing.dir", "file://" + chkDir);
        conf.setString("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
        conf.setString("state.backend.type", "rocksdb");
        conf.setString("pipeline.object-reuse", "true");
        conf.setString("table.exec.mini-batch.enabled", "true");
        conf.setString("table.exec.mini-batch.allow-latency", "2 s");
        conf.setString("table.exec.mini-batch.size", "50000");
        TableEnvironment env = TableEnvironment.create(
                EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
        for (String s : statements(ddl)) {
            env.executeSql(s);
        }
        TableResult last = null;
        for (String s : statements(query)) {
            last = env.executeSql(s);
        }
        System.out.println("flink: job submitted");
        long start = System.nanoTime();
        if (last != null) {
            last.await();
        }
        System.out.printf("flink: job finished in %.3f s%n", (System.nanoTime() - start) / 1e9);
    }

    /** The statements of a file: its lines without the comment lines, split at the semicolons ending a line. */
    static List<String> statements(Path file) throws Exception {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String t = line.strip();
            if (t.startsWith("--") || t.isEmpty()) {
                continue;
            }
            if (t.endsWith(";")) {
                cur.append(line, 0, line.lastIndexOf(';'));
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(line).append('\n');
            }
        }
        if (!cur.toString().isBlank()) {
            out.add(cur.toString());
        }
        return out;
    }

    static void csv(Generator.Config c, long n) {
        Generator g = new Generator(c);
        Generator.Event e = new Generator.Event();
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out, 1 << 16), false, StandardCharsets.UTF_8);
        for (long i = 0; i < n; i++) {
            g.fill(i, e, 7);
            StringBuilder b = new StringBuilder();
            b.append(i).append(',').append(e.type).append(',').append(e.dateTime);
            switch (e.type) {
                case Generator.PERSON -> b.append(',').append(e.personId).append(',').append(s(e.name))
                        .append(',').append(s(e.emailAddress)).append(',').append(s(e.creditCard))
                        .append(',').append(s(e.city)).append(',').append(s(e.state));
                case Generator.AUCTION -> b.append(',').append(e.auctionId).append(',').append(s(e.itemName))
                        .append(',').append(s(e.description)).append(',').append(e.initialBid)
                        .append(',').append(e.reserve).append(',').append(e.expires)
                        .append(',').append(e.seller).append(',').append(e.category);
                default -> b.append(',').append(e.bidAuction).append(',').append(e.bidder)
                        .append(',').append(e.price).append(',').append(s(e.channel)).append(',').append(s(e.url));
            }
            b.append(',').append(new String(Generator.PADDING, e.extraOff, e.extraLen, StandardCharsets.UTF_8));
            out.println(b);
        }
        out.flush();
    }

    private static String s(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
