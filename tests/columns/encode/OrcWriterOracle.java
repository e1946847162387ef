// Test oracle for tests/columns/encode/test_java_writer.py: rewrites ORC files with ORC Java's
// own writer (the orc-core jar PySpark bundles), so that aorc's column encoders can be
// compared with it stream for stream, position for position.
//
// Run as a single-file program: java -cp 'pyspark/jars/*' OrcWriterOracle.java < jobs
// Each line of input is one job, tab-separated:
//   input path, output path, output schema (ORC type string), row index stride,
//   bloom filter columns (comma-separated ids, or "-"), bloom filter fpp,
//   dictionary key size threshold, writer time zone ("UTC": ORC's useUTCTimestamp, else the
//   JVM default zone is set to it), rows per stripe (0: one stripe)
// The input is read batch by batch with ORC Java's reader and each batch is handed to the
// writer unchanged (the output schema may say char/varchar where the input has strings: they
// use the same vectors). An input path ending in ".ts.txt" is instead a list of timestamps,
// one "seconds nanos" line each, written as the single column of "struct<ts:timestamp>".
// The output is uncompressed, version 0.12, proleptic Gregorian.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.sql.Timestamp;
import java.util.TimeZone;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.ql.exec.vector.TimestampColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.VectorizedRowBatch;
import org.apache.orc.CompressionKind;
import org.apache.orc.OrcFile;
import org.apache.orc.Reader;
import org.apache.orc.RecordReader;
import org.apache.orc.TypeDescription;
import org.apache.orc.Writer;

public class OrcWriterOracle {

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(
        new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (!line.isEmpty()) {
        run(line.split("\t", -1));
      }
    }
  }

  static void run(String[] job) throws Exception {
    TimeZone.setDefault(TimeZone.getTimeZone(job[7]));
    Configuration conf = new Configuration();
    conf.set("orc.dictionary.key.threshold", job[6]);
    FileSystem fs = FileSystem.getLocal(conf);
    fs.setWriteChecksum(false);
    OrcFile.WriterOptions options = OrcFile.writerOptions(conf)
        .fileSystem(fs)
        .overwrite(true)
        .setSchema(TypeDescription.fromString(job[2]))
        .compress(CompressionKind.NONE)
        .version(OrcFile.Version.V_0_12)
        .rowIndexStride(Integer.parseInt(job[3]))
        .bloomFilterFpp(Double.parseDouble(job[5]))
        .useUTCTimestamp(job[7].equals("UTC"))
        .setProlepticGregorian(true)
        .stripeSize(1L << 40)
        .blockSize(1L << 41)
        .blockPadding(false);
    if (!job[4].equals("-")) {
      options.bloomFilterColumns(job[4]);
    }
    long perStripe = Long.parseLong(job[8]);
    Writer writer = OrcFile.createWriter(new Path(job[1]), options);
    if (job[0].endsWith(".ts.txt")) {
      writeTimestamps(job[0], writer);
    } else {
      Reader reader = OrcFile.createReader(new Path(job[0]),
          OrcFile.readerOptions(conf).filesystem(fs));
      RecordReader rows = reader.rows(reader.options());
      VectorizedRowBatch batch = reader.getSchema().createRowBatch();
      long sinceFlush = 0;
      while (rows.nextBatch(batch)) {
        if (perStripe > 0 && sinceFlush + batch.size > perStripe) {
          throw new IllegalArgumentException("rows per stripe must be a multiple of 1024");
        }
        writer.addRowBatch(batch);
        sinceFlush += batch.size;
        if (perStripe > 0 && sinceFlush == perStripe) {
          writer.writeIntermediateFooter();
          sinceFlush = 0;
        }
      }
      rows.close();
    }
    writer.close();
  }

  /** One timestamp column from lines "seconds nanos" (floor seconds, nanos 0..999999999). */
  static void writeTimestamps(String path, Writer writer) throws Exception {
    VectorizedRowBatch batch = writer.getSchema().createRowBatch();
    TimestampColumnVector col = (TimestampColumnVector) batch.cols[0];
    for (String line : Files.readAllLines(Paths.get(path), StandardCharsets.UTF_8)) {
      if (line.isEmpty()) {
        continue;
      }
      String[] parts = line.split(" ");
      Timestamp value = new Timestamp(Long.parseLong(parts[0]) * 1000);
      value.setNanos(Integer.parseInt(parts[1]));
      col.set(batch.size++, value);
      if (batch.size == batch.getMaxSize()) {
        writer.addRowBatch(batch);
        batch.reset();
      }
    }
    if (batch.size > 0) {
      writer.addRowBatch(batch);
    }
  }
}
