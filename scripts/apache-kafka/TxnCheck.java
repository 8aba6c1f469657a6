import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Readiness check of scripts/apache-kafka.sh: commits one transaction to a
 * topic and reads it back with isolation.level=read_committed, so the broker
 * is known to serve metadata, produce, the transaction coordinator and
 * fetches before a test uses it. Exits 0 on success, 1 otherwise.
 *
 * Usage: java -cp 'lib/*' TxnCheck.java BOOTSTRAP TOPIC
 */
public class TxnCheck {
    public static void main(String[] args) {
        String bootstrap = args[0], topic = args[1];
        String value = "ready-" + System.nanoTime();
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("transactional.id", "streamsql-readiness-check");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("max.block.ms", "20000");
        try (KafkaProducer<String, String> prod = new KafkaProducer<>(p)) {
            prod.initTransactions();
            prod.beginTransaction();
            prod.send(new ProducerRecord<>(topic, 0, "k", value)).get();
            prod.commitTransaction();
        } catch (Exception e) {
            System.err.println("transaction failed: " + e);
            System.exit(1);
        }
        Properties c = new Properties();
        c.put("bootstrap.servers", bootstrap);
        c.put("isolation.level", "read_committed");
        c.put("auto.offset.reset", "earliest");
        c.put("key.deserializer", StringDeserializer.class.getName());
        c.put("value.deserializer", StringDeserializer.class.getName());
        try (KafkaConsumer<String, String> cons = new KafkaConsumer<>(c)) {
            // assign, not subscribe: no consumer group to wait for.
            TopicPartition tp = new TopicPartition(topic, 0);
            cons.assign(List.of(tp));
            cons.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline) {
                ConsumerRecords<String, String> rs = cons.poll(Duration.ofMillis(500));
                for (var r : rs) {
                    if (r.value().equals(value)) {
                        System.exit(0);
                    }
                }
            }
        }
        System.err.println("the committed record was not read back within 30 s");
        System.exit(1);
    }
}
