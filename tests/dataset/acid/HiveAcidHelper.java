// Test helper (not shipped): writes Hive transactional tables with Hive 2.3's own ACID writer
// (OrcRecordUpdater, from PySpark's hive-exec jar) and reads them back with Hive's own ACID
// reader (OrcInputFormat with hive.transactional.table.scan: AcidUtils.getAcidState picks the
// directories, OrcRawRecordMerger applies the delete events).
//
// Commands, one per line on stdin (fields separated by tabs; \N is null):
//   updater <partdir> <base|delta> <minTxn> <maxTxn> <stmt> <bucket>   opens a record updater
//   insert <txn> <id> <name> <score>                                    into the open updater
//   delete <txn> <origTxn> <bucket> <rowId>                             (split update: delete_delta)
//   flush                                                               flushes it (side file)
//   close                                                               closes the updater
//   original <file> then insert lines, then close: a plain (non-ACID) ORC file
//   read <partdir> <validTxnList|->                                     prints rows, then "end"
//   txnlist <hwm> <open,ids|-> <aborted,ids|->                          prints Hive's string form
// In Hive's ORC package for OrcStruct's package-private field access.
package org.apache.hadoop.hive.ql.io.orc;

import java.io.*;
import java.util.*;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.common.ValidReadTxnList;
import org.apache.hadoop.hive.common.ValidTxnList;
import org.apache.hadoop.hive.ql.io.AcidInputFormat;
import org.apache.hadoop.hive.ql.io.AcidOutputFormat;
import org.apache.hadoop.hive.ql.io.RecordIdentifier;
import org.apache.hadoop.hive.ql.io.RecordUpdater;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorFactory;
import org.apache.hadoop.hive.serde2.objectinspector.StructField;
import org.apache.hadoop.hive.serde2.objectinspector.StructObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.primitive.PrimitiveObjectInspectorFactory;
import org.apache.hadoop.io.NullWritable;
import org.apache.hadoop.mapred.FileInputFormat;
import org.apache.hadoop.mapred.InputSplit;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.Reporter;

public class HiveAcidHelper {
  static final Configuration CONF = new Configuration();

  static StructObjectInspector inspector(boolean withRowId) {
    List<String> names = new ArrayList<>();
    List<ObjectInspector> ois = new ArrayList<>();
    if (withRowId) { names.add("ROW__ID"); ois.add(RecordIdentifier.StructInfo.oi); }
    names.add("id"); ois.add(PrimitiveObjectInspectorFactory.javaIntObjectInspector);
    names.add("name"); ois.add(PrimitiveObjectInspectorFactory.javaStringObjectInspector);
    names.add("score"); ois.add(PrimitiveObjectInspectorFactory.javaDoubleObjectInspector);
    return ObjectInspectorFactory.getStandardStructObjectInspector(names, ois);
  }

  static Object nul(String s) { return "\\N".equals(s) ? null : s; }

  static List<Object> row(String[] f, int at, boolean withRowId) {
    List<Object> r = new ArrayList<>();
    if (withRowId) r.add(null);
    r.add(nul(f[at]) == null ? null : Integer.valueOf(f[at]));
    r.add(nul(f[at + 1]));
    r.add(nul(f[at + 2]) == null ? null : Double.valueOf(f[at + 2]));
    return r;
  }

  static String txt(Object o) { return o == null ? "\\N" : o.toString(); }

  public static void main(String[] args) throws Exception {
    CONF.set("fs.defaultFS", "file:///");
    // no checksum layer: hflush reaches the file at once (streaming ingest's flushes)
    CONF.set("fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem");
    CONF.setBoolean("fs.file.impl.disable.cache", true);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
    RecordUpdater updater = null;
    Writer plain = null;
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      String[] f = line.split("\t", -1);
      try {
      switch (f[0]) {
        case "updater": {
          Properties props = new Properties();
          props.setProperty("transactional", "true");
          props.setProperty("transactional_properties", "default");
          AcidOutputFormat.Options o = new AcidOutputFormat.Options(CONF)
              .inspector(inspector(true)).recordIdColumn(0).tableProperties(props)
              .writingBase(f[2].equals("base"))
              .minimumTransactionId(Long.parseLong(f[3])).maximumTransactionId(Long.parseLong(f[4]))
              .statementId(Integer.parseInt(f[5])).bucket(Integer.parseInt(f[6]))
              .finalDestination(new Path(f[1]));
          updater = new OrcOutputFormat().getRecordUpdater(new Path(f[1]), o);
          break;
        }
        case "original": {
          plain = OrcFile.createWriter(new Path(f[1]),
              OrcFile.writerOptions(CONF).inspector(inspector(false)));
          break;
        }
        case "insert":
          if (plain != null) plain.addRow(row(f, 2, false));
          else updater.insert(Long.parseLong(f[1]), row(f, 2, true));
          break;
        case "delete": {
          List<Object> r = row(new String[] {"\\N", "\\N", "\\N"}, 0, true);
          r.set(0, Arrays.asList(Long.parseLong(f[2]), Integer.parseInt(f[3]), Long.parseLong(f[4])));
          updater.delete(Long.parseLong(f[1]), r);
          break;
        }
        case "flush":
          updater.flush();
          out.println("K");
          break;
        case "close":
          if (plain != null) { plain.close(); plain = null; }
          else { updater.close(false); updater = null; }
          out.println("K");
          break;
        case "txnlist": {
          out.println("T\t" + txnList(f).writeToString());
          break;
        }
        case "read":
          read(f[1], f[2], out);
          break;
        default:
          throw new IllegalArgumentException("unknown command " + f[0]);
      }
      } catch (Exception e) {  // reported, and the session goes on
        out.println("X\t" + String.valueOf(e).replace('\n', ' '));
      }
    }
  }

  static long[] ids(String s) {
    if (s.equals("-")) return new long[0];
    return Arrays.stream(s.split(",")).mapToLong(Long::parseLong).toArray();
  }

  static ValidReadTxnList txnList(String[] f) {
    long hwm = Long.parseLong(f[1]);
    long[] open = ids(f[2]);
    long[] aborted = ids(f[3]);
    long[] all = new long[open.length + aborted.length];
    System.arraycopy(open, 0, all, 0, open.length);
    System.arraycopy(aborted, 0, all, open.length, aborted.length);
    Arrays.sort(all);
    BitSet abortedBits = new BitSet();
    for (int i = 0; i < all.length; i++)
      for (long a : aborted) if (all[i] == a) abortedBits.set(i);
    long minOpen = open.length == 0 ? Long.MAX_VALUE : Arrays.stream(open).min().getAsLong();
    // the constructor taking the aborted bits, through the string form (its only public door)
    StringBuilder s = new StringBuilder().append(hwm).append(':').append(minOpen).append(':');
    StringJoiner o = new StringJoiner(","), a = new StringJoiner(",");
    for (int i = 0; i < all.length; i++) (abortedBits.get(i) ? a : o).add(Long.toString(all[i]));
    s.append(o).append(':').append(a);
    return new ValidReadTxnList(s.toString());
  }

  /** A transaction list that sees every transaction. Hive 2.3.10's hive-common has a
   *  (long[], long) constructor, hive-storage-api 2.8 (which PySpark 3.5's classpath puts
   *  first) only (long[], BitSet, long, long): whichever class is loaded is asked. */
  static String everyTransaction() throws IOException {
    try {
      try {
        return ValidReadTxnList.class.getConstructor(long[].class, long.class)
            .newInstance(new long[0], Long.MAX_VALUE).writeToString();
      } catch (NoSuchMethodException e) {
        return ValidReadTxnList.class
            .getConstructor(long[].class, BitSet.class, long.class, long.class)
            .newInstance(new long[0], new BitSet(), Long.MAX_VALUE, Long.MAX_VALUE)
            .writeToString();
      }
    } catch (ReflectiveOperationException e) {
      throw new IOException("no usable ValidReadTxnList constructor", e);
    }
  }

  static void read(String dir, String txns, PrintStream out) throws IOException {
    JobConf job = new JobConf(CONF);
    job.setBoolean("hive.transactional.table.scan", true);
    job.setBoolean("transactional", true);
    job.set("transactional_properties", "default");
    org.apache.hadoop.hive.ql.io.AcidUtils.setAcidOperationalProperties(job,
        org.apache.hadoop.hive.ql.io.AcidUtils.AcidOperationalProperties.getDefault());
    job.set("columns", "id,name,score");
    job.set("columns.types", "int:string:double");
    job.set("schema.evolution.columns", "id,name,score");
    job.set("schema.evolution.columns.types", "int:string:double");
    job.set("hive.io.file.readcolumn.ids", "0,1,2");
    job.set("hive.io.file.readcolumn.names", "id,name,score");
    job.setBoolean("hive.io.file.read.all.columns", true);
    job.set(ValidTxnList.VALID_TXNS_KEY,
        txns.equals("-") ? everyTransaction() : txns);
    FileInputFormat.setInputPaths(job, new Path(dir));
    OrcInputFormat format = new OrcInputFormat();
    for (InputSplit split : format.getSplits(job, 1)) {
      org.apache.hadoop.mapred.RecordReader<NullWritable, OrcStruct> rr =
          format.getRecordReader(split, job, Reporter.NULL);
      NullWritable k = rr.createKey();
      OrcStruct v = rr.createValue();
      while (rr.next(k, v)) {
        RecordIdentifier id = ((AcidInputFormat.AcidRecordReader<?, ?>) rr).getRecordIdentifier();
        StringBuilder b = new StringBuilder("R\t");
        b.append(id.getTransactionId()).append('\t').append(id.getBucketId()).append('\t')
            .append(id.getRowId());
        for (int i = 0; i < v.getNumFields(); i++) b.append('\t').append(txt(v.getFieldValue(i)));
        out.println(b);
      }
      rr.close();
    }
    out.println("E");
  }
}
