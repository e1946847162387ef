// Test helper: ORC Java (from the PySpark jars) reading and writing encrypted ORC files with an
// InMemoryKeystore, for aorc's encryption tests (tests/encryption/java_peer.py compiles it).
//   read FILE [NAME:VERSION:HEX ...]        rows as JSON arrays, then "stats" lines
//   write FILE ROWS ENCRYPT MASKS COMPRESS [NAME:VERSION:HEX ...]
//   readkms FILE URL                       read with Hadoop's KMSClientProvider at URL
//                                          (kms://http@HOST:PORT/kms), no InMemoryKeystore
//   writekms FILE ROWS ENCRYPT MASKS COMPRESS URL   write with the KMS's keys
//   writenested FILE ROWS ENCRYPT MASKS [NAME:VERSION:HEX ...]   struct<id:bigint,
//                                          address:struct<street:string,zip:string>>
//   writeunion FILE ROWS ENCRYPT MASKS [NAME:VERSION:HEX ...]   struct<id:bigint,
//                                          u:uniontype<bigint,string>>
//   writechar FILE ROWS MASKS [NAME:VERSION:HEX ...]   struct<id:bigint,c:char(70),
//                                          v:varchar(10),s:char(8)>, c, v and s encrypted
//                                          with pii
//   keystore FILE PASSWORD                 the secret keys of a JCEKS store, as NAME HEX
//   redact TYPE N P1..PN V...              ORC Java's RedactMaskFactory(P1..PN) on values of
//                                          TYPE (\N null; strings as UTF-8 hex; doubles as
//                                          their bits in hex; timestamps as UTC millis), one
//                                          masked value per line, in the same forms
//   batch FILE                             one command per line (arguments tab-separated),
//                                          each command's output after a line "@@@ N"
import java.io.FileInputStream;
import java.nio.charset.StandardCharsets;
import java.security.Key;
import java.security.KeyStore;
import java.util.Collections;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.ql.exec.vector.BytesColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.ColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.LongColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.VectorizedRowBatch;
import org.apache.orc.ColumnStatistics;
import org.apache.orc.CompressionKind;
import org.apache.orc.EncryptionAlgorithm;
import org.apache.orc.InMemoryKeystore;
import org.apache.orc.OrcFile;
import org.apache.orc.Reader;
import org.apache.orc.RecordReader;
import org.apache.orc.TypeDescription;
import org.apache.orc.Writer;

public class OrcEncHelper {
  static InMemoryKeystore keys(String[] args, int from) throws Exception {
    InMemoryKeystore ks = new InMemoryKeystore();
    for (int i = from; i < args.length; ++i) {
      String[] p = args[i].split(":");
      byte[] k = new byte[p[2].length() / 2];
      for (int j = 0; j < k.length; ++j) {
        k[j] = (byte) Integer.parseInt(p[2].substring(2 * j, 2 * j + 2), 16);
      }
      ks.addKey(p[0], Integer.parseInt(p[1]),
          k.length == 16 ? EncryptionAlgorithm.AES_CTR_128 : EncryptionAlgorithm.AES_CTR_256, k);
    }
    return ks;
  }

  static String json(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  static Configuration kmsConf(String url) {
    Configuration conf = new Configuration();
    conf.set("hadoop.security.key.provider.path", url);
    return conf;
  }

  static void read(String[] args) throws Exception {
    boolean kms = args[0].equals("readkms");
    Configuration conf = kms ? kmsConf(args[2]) : new Configuration();
    OrcFile.ReaderOptions opts = OrcFile.readerOptions(conf);
    if (!kms && args.length > 2) opts.setKeyProvider(keys(args, 2));
    Reader reader = OrcFile.createReader(new Path(args[1]), opts);
    TypeDescription schema = reader.getSchema();
    VectorizedRowBatch batch = schema.createRowBatch();
    StringBuilder out = new StringBuilder();
    try (RecordReader rows = reader.rows()) {
      while (rows.nextBatch(batch)) {
        for (int r = 0; r < batch.size; ++r) {
          out.append('[');
          for (int c = 0; c < batch.numCols; ++c) {
            if (c > 0) out.append(',');
            ColumnVector v = batch.cols[c];
            int row = v.isRepeating ? 0 : r;
            if (!v.noNulls && v.isNull[row]) out.append("null");
            else if (v instanceof BytesColumnVector) out.append(json(((BytesColumnVector) v).toString(row)));
            else if (v instanceof LongColumnVector) out.append(((LongColumnVector) v).vector[row]);
            else { StringBuilder s = new StringBuilder(); v.stringifyValue(s, row); out.append(json(s.toString())); }
          }
          out.append("]\n");
        }
      }
    }
    ColumnStatistics[] stats = reader.getStatistics();
    for (int c = 0; c < stats.length; ++c) {
      out.append("stats ").append(c).append(' ').append(json(stats[c].toString().replace('\n', ' '))).append('\n');
    }
    System.out.print(out);
  }

  static void write(String[] args) throws Exception {
    boolean kms = args[0].equals("writekms");
    Configuration conf = kms ? kmsConf(args[6]) : new Configuration();
    int n = Integer.parseInt(args[2]);
    TypeDescription schema = TypeDescription.fromString(
        "struct<id:bigint,ssn:string,email:string,salary:bigint,name:string>");
    OrcFile.WriterOptions opts = OrcFile.writerOptions(conf).setSchema(schema);
    if (!kms) opts.setKeyProvider(keys(args, 6));
    opts.encrypt(args[3]).compress(CompressionKind.valueOf(args[5]))
        .rowIndexStride(1000).stripeSize(64 * 1024).bufferSize(4096)
        .bloomFilterColumns("ssn");
    if (!args[4].isEmpty()) opts.masks(args[4]);
    try (Writer w = OrcFile.createWriter(new Path(args[1]), opts)) {
      VectorizedRowBatch b = schema.createRowBatch();
      for (int i = 0; i < n; ++i) {
        int r = b.size++;
        ((LongColumnVector) b.cols[0]).vector[r] = i;
        byte[] ssn = String.format("%03d-%02d-%04d", i % 1000, i % 100, i).getBytes(StandardCharsets.UTF_8);
        ((BytesColumnVector) b.cols[1]).setVal(r, ssn);
        if (i % 7 == 3) { b.cols[2].noNulls = false; b.cols[2].isNull[r] = true; }
        else ((BytesColumnVector) b.cols[2]).setVal(r, ("user" + i + "@example.com").getBytes(StandardCharsets.UTF_8));
        ((LongColumnVector) b.cols[3]).vector[r] = 1000L * (i % 97);
        ((BytesColumnVector) b.cols[4]).setVal(r, ("Name " + i).getBytes(StandardCharsets.UTF_8));
        if (b.size == b.getMaxSize()) { w.addRowBatch(b); b.reset(); }
      }
      if (b.size > 0) w.addRowBatch(b);
    }
  }

  // One row of a batch: fill row r of b with the file's i-th row.
  interface RowFiller { void fill(VectorizedRowBatch b, int r, int i); }

  // A zlib file of n rows of schema with the columns of encrypt (ORC's orc.encrypt) under
  // keys and the masks of masks (orc.mask; none when empty): row groups of 1,000 rows,
  // 64 KiB stripes, 4 KiB compression blocks.
  static void writeEncrypted(String path, int n, String schemaText, String encrypt,
      String masks, InMemoryKeystore keys, RowFiller filler) throws Exception {
    TypeDescription schema = TypeDescription.fromString(schemaText);
    OrcFile.WriterOptions opts = OrcFile.writerOptions(new Configuration()).setSchema(schema)
        .setKeyProvider(keys).encrypt(encrypt).compress(CompressionKind.ZLIB)
        .rowIndexStride(1000).stripeSize(64 * 1024).bufferSize(4096);
    if (!masks.isEmpty()) opts.masks(masks);
    try (Writer w = OrcFile.createWriter(new Path(path), opts)) {
      VectorizedRowBatch b = schema.createRowBatch();
      for (int i = 0; i < n; ++i) {
        filler.fill(b, b.size++, i);
        if (b.size == b.getMaxSize()) { w.addRowBatch(b); b.reset(); }
      }
      if (b.size > 0) w.addRowBatch(b);
    }
  }

  static void setNull(ColumnVector v, int r) {
    v.noNulls = false;
    v.isNull[r] = true;
  }

  static void setText(ColumnVector v, int r, String text) {
    ((BytesColumnVector) v).setVal(r, text.getBytes(StandardCharsets.UTF_8));
  }

  static void writeNested(String[] args) throws Exception {
    writeEncrypted(args[1], Integer.parseInt(args[2]),
        "struct<id:bigint,address:struct<street:string,zip:string>>", args[3], args[4],
        keys(args, 5), (b, r, i) -> {
          org.apache.hadoop.hive.ql.exec.vector.StructColumnVector address =
              (org.apache.hadoop.hive.ql.exec.vector.StructColumnVector) b.cols[1];
          ((LongColumnVector) b.cols[0]).vector[r] = i;
          if (i % 11 == 5) { setNull(address, r); return; }
          setText(address.fields[0], r, "Street " + i);
          if (i % 7 == 2) setNull(address.fields[1], r);
          else setText(address.fields[1], r, String.format("%05d", (i * 37) % 100000));
        });
  }

  static void writeUnion(String[] args) throws Exception {
    writeEncrypted(args[1], Integer.parseInt(args[2]),
        "struct<id:bigint,u:uniontype<bigint,string>>", args[3], args[4], keys(args, 5),
        (b, r, i) -> {
          org.apache.hadoop.hive.ql.exec.vector.UnionColumnVector u =
              (org.apache.hadoop.hive.ql.exec.vector.UnionColumnVector) b.cols[1];
          ((LongColumnVector) b.cols[0]).vector[r] = i;
          int tag = i % 3 == 1 ? 1 : 0;
          u.tags[r] = tag;
          if (i % 13 == 6) setNull(u.fields[tag], r);
          else if (tag == 0) ((LongColumnVector) u.fields[0]).vector[r] = i * 1234567L - 99999;
          else setText(u.fields[1], r, "Ab " + i + "-x!");
        });
  }

  static void writeChar(String[] args) throws Exception {
    writeEncrypted(args[1], Integer.parseInt(args[2]),
        "struct<id:bigint,c:char(70),v:varchar(10),s:char(8)>", "pii:c,v,s", args[3],
        keys(args, 4), (b, r, i) -> {
          ((LongColumnVector) b.cols[0]).vector[r] = i;
          for (int c = 1; c < 4; ++c) {
            if (i % 9 == c) setNull(b.cols[c], r);
            else setText(b.cols[c], r, "v" + (i * c) + (i % 4 == 0 ? " Ünï" : ""));
          }
        });
  }

  static void keystore(String[] args) throws Exception {
    KeyStore ks = KeyStore.getInstance("JCEKS");
    char[] pw = args[2].toCharArray();
    try (FileInputStream in = new FileInputStream(args[1])) { ks.load(in, pw); }
    for (String alias : Collections.list(ks.aliases())) {
      Key k;
      try { k = ks.getKey(alias, pw); } catch (Exception e) { continue; }  // Hadoop's metadata entries
      StringBuilder hex = new StringBuilder();
      for (byte x : k.getEncoded()) hex.append(String.format("%02x", x));
      System.out.println(alias + " " + hex);
    }
  }

  static String hex(byte[] b, int start, int len) {
    StringBuilder out = new StringBuilder();
    for (int i = start; i < start + len; ++i) out.append(String.format("%02x", b[i] & 0xff));
    return out.toString();
  }

  static void redact(String[] a) throws Exception {
    java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone("UTC"));
    TypeDescription type = TypeDescription.fromString(a[1]);
    int np = Integer.parseInt(a[2]);
    String[] params = java.util.Arrays.copyOfRange(a, 3, 3 + np);
    int n = a.length - 3 - np;
    TypeDescription schema = TypeDescription.createStruct().addField("c", type);
    VectorizedRowBatch in = schema.createRowBatch(Math.max(n, 1));
    VectorizedRowBatch out = schema.createRowBatch(Math.max(n, 1));
    ColumnVector src = in.cols[0];
    ColumnVector dst = out.cols[0];
    if (dst instanceof BytesColumnVector) ((BytesColumnVector) dst).initBuffer();
    for (int i = 0; i < n; ++i) {
      String v = a[3 + np + i];
      if (v.equals("\\N")) { src.noNulls = false; src.isNull[i] = true; continue; }
      switch (type.getCategory()) {
        case BOOLEAN: case BYTE: case SHORT: case INT: case LONG: case DATE:
          ((LongColumnVector) src).vector[i] = Long.parseLong(v); break;
        case FLOAT: case DOUBLE:
          ((org.apache.hadoop.hive.ql.exec.vector.DoubleColumnVector) src).vector[i] =
              Double.longBitsToDouble(Long.parseUnsignedLong(v, 16)); break;
        case DECIMAL:
          ((org.apache.hadoop.hive.ql.exec.vector.DecimalColumnVector) src).vector[i].set(
              org.apache.hadoop.hive.common.type.HiveDecimal.create(v)); break;
        case TIMESTAMP: {
          org.apache.hadoop.hive.ql.exec.vector.TimestampColumnVector t =
              (org.apache.hadoop.hive.ql.exec.vector.TimestampColumnVector) src;
          long ms = Long.parseLong(v);
          t.time[i] = ms;
          t.nanos[i] = (int) Math.floorMod(ms, 1000L) * 1000000;
          break;
        }
        default: {
          byte[] b = new byte[v.length() / 2];
          for (int k = 0; k < b.length; ++k) b[k] = (byte) Integer.parseInt(v.substring(2 * k, 2 * k + 2), 16);
          ((BytesColumnVector) src).setVal(i, b);
        }
      }
    }
    org.apache.orc.DataMask mask = new org.apache.orc.impl.mask.RedactMaskFactory(params).build(type, null);
    mask.maskData(src, dst, 0, n);
    for (int i = 0; i < n; ++i) {
      int r = dst.isRepeating ? 0 : i;
      if (!dst.noNulls && dst.isNull[r]) { System.out.println("\\N"); continue; }
      switch (type.getCategory()) {
        case BOOLEAN: case BYTE: case SHORT: case INT: case LONG: case DATE:
          System.out.println(((LongColumnVector) dst).vector[r]); break;
        case FLOAT: case DOUBLE:
          System.out.println(Long.toHexString(Double.doubleToRawLongBits(
              ((org.apache.hadoop.hive.ql.exec.vector.DoubleColumnVector) dst).vector[r]))); break;
        case DECIMAL:
          System.out.println(((org.apache.hadoop.hive.ql.exec.vector.DecimalColumnVector) dst).vector[r]); break;
        case TIMESTAMP: {
          org.apache.hadoop.hive.ql.exec.vector.TimestampColumnVector t =
              (org.apache.hadoop.hive.ql.exec.vector.TimestampColumnVector) dst;
          System.out.println(t.time[r] + " " + t.nanos[r]);
          break;
        }
        default: {
          BytesColumnVector b = (BytesColumnVector) dst;
          System.out.println("x" + hex(b.vector[r], b.start[r], b.length[r]));
        }
      }
    }
  }

  static void run(String[] args) throws Exception {
    switch (args[0]) {
      case "redact": redact(args); break;
      case "writenested": writeNested(args); break;
      case "writeunion": writeUnion(args); break;
      case "writechar": writeChar(args); break;
      case "read": case "readkms": read(args); break;
      case "write": case "writekms": write(args); break;
      case "keystore": keystore(args); break;
      default: throw new IllegalArgumentException(args[0]);
    }
  }

  public static void main(String[] args) throws Exception {
    if (!args[0].equals("batch")) {
      run(args);
      return;
    }
    java.util.List<String> lines = java.nio.file.Files.readAllLines(java.nio.file.Paths.get(args[1]));
    for (int i = 0; i < lines.size(); ++i) {
      System.out.println("@@@ " + i);
      String[] cmd = lines.get(i).split("\t", -1);
      try {
        run(cmd);
      } catch (Exception e) {
        System.out.println("error " + json(e.toString().replace('\n', ' ')));
      }
      System.out.flush();
    }
  }
}
