// Writes the ORC Java part of aorc's corpus of other writers' files (tests/data/writers/) and
// prints, for each file, the rows as ORC Java's own reader reads them back (one JSON object
// per file on stdout). Run by scripts/build_writers_corpus.py with the PySpark jars on the
// classpath; the JVM's default zone (-Duser.timezone) is the writer zone ORC Java records.
//
// Usage: java CorpusWriter OUT_DIR PREFIX       (write the files, print what ORC Java reads)
//        java CorpusWriter --read FILE...        (print what ORC Java reads of other files)
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.common.type.HiveDecimal;
import org.apache.hadoop.hive.ql.exec.vector.*;
import org.apache.orc.OrcFile;
import org.apache.orc.Reader;
import org.apache.orc.RecordReader;
import org.apache.orc.TypeDescription;
import org.apache.orc.Writer;

public class CorpusWriter {
  static final Configuration CONF = new Configuration();

  static String q(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  static String hex(byte[] v, int start, int len) {
    StringBuilder b = new StringBuilder("\"");
    for (int i = start; i < start + len; i++) b.append(String.format("%02x", v[i] & 0xff));
    return b.append('"').toString();
  }

  // The canonical form of one value (see tests/data/writers/README.md).
  static String value(ColumnVector v, TypeDescription t, int row) {
    if (v.isRepeating) row = 0;
    if (!v.noNulls && v.isNull[row]) return "null";
    switch (t.getCategory()) {
      case BOOLEAN: return ((LongColumnVector) v).vector[row] != 0 ? "true" : "false";
      case BYTE: case SHORT: case INT: case LONG: case DATE:
        return Long.toString(((LongColumnVector) v).vector[row]);
      case FLOAT: case DOUBLE: {
        double d = ((DoubleColumnVector) v).vector[row];
        if (t.getCategory() == TypeDescription.Category.FLOAT) d = Double.parseDouble(Float.toString((float) d));
        return Double.toString(d);
      }
      case STRING: case CHAR: case VARCHAR: {
        BytesColumnVector b = (BytesColumnVector) v;
        return q(new String(b.vector[row], b.start[row], b.length[row], StandardCharsets.UTF_8));
      }
      case BINARY: {
        BytesColumnVector b = (BytesColumnVector) v;
        return hex(b.vector[row], b.start[row], b.length[row]);
      }
      case DECIMAL: {
        HiveDecimal d = ((DecimalColumnVector) v).vector[row].getHiveDecimal();
        return q(d.bigDecimalValue().setScale(t.getScale()).toPlainString());
      }
      case LIST: {
        ListColumnVector l = (ListColumnVector) v;
        List<String> out = new ArrayList<>();
        for (long i = l.offsets[row]; i < l.offsets[row] + l.lengths[row]; i++) {
          out.add(value(l.child, t.getChildren().get(0), (int) i));
        }
        return "[" + String.join(",", out) + "]";
      }
      case MAP: {
        MapColumnVector m = (MapColumnVector) v;
        List<String> out = new ArrayList<>();
        for (long i = m.offsets[row]; i < m.offsets[row] + m.lengths[row]; i++) {
          out.add("[" + value(m.keys, t.getChildren().get(0), (int) i) + ","
              + value(m.values, t.getChildren().get(1), (int) i) + "]");
        }
        return "[" + String.join(",", out) + "]";
      }
      case STRUCT: {
        StructColumnVector s = (StructColumnVector) v;
        List<String> out = new ArrayList<>();
        for (int i = 0; i < s.fields.length; i++) {
          out.add(q(t.getFieldNames().get(i)) + ":" + value(s.fields[i], t.getChildren().get(i), row));
        }
        return "{" + String.join(",", out) + "}";
      }
      case UNION: {
        UnionColumnVector u = (UnionColumnVector) v;
        int tag = u.tags[row];
        return value(u.fields[tag], t.getChildren().get(tag), row);
      }
      case TIMESTAMP: default: {
        if (!(v instanceof TimestampColumnVector)) throw new IllegalArgumentException(t.toString());
        TimestampColumnVector ts = (TimestampColumnVector) v;
        long secs = Math.floorDiv(ts.time[row], 1000L);
        Instant at = Instant.ofEpochSecond(secs, ts.nanos[row]);
        if (t.getCategory().name().equals("TIMESTAMP_INSTANT")) {
          return "{\"instant_ns\":" + (at.getEpochSecond() * 1_000_000_000L + at.getNano()) + "}";
        }
        LocalDateTime wall = LocalDateTime.ofInstant(at, ZoneId.systemDefault());
        long wallNs = wall.toEpochSecond(ZoneOffset.UTC) * 1_000_000_000L + wall.getNano();
        return "{\"wall_ns\":" + wallNs + ",\"instant_ns\":"
            + (at.getEpochSecond() * 1_000_000_000L + at.getNano()) + "}";
      }
    }
  }

  static String readBack(Path path) throws Exception {
    Reader reader = OrcFile.createReader(path, OrcFile.readerOptions(CONF));
    TypeDescription schema = reader.getSchema();
    VectorizedRowBatch batch = schema.createRowBatch();
    RecordReader rows = reader.rows();
    List<String> out = new ArrayList<>();
    while (rows.nextBatch(batch)) {
      for (int r = 0; r < batch.size; r++) {
        List<String> cols = new ArrayList<>();
        for (int c = 0; c < batch.cols.length; c++) {
          cols.add(value(batch.cols[c], schema.getChildren().get(c), r));
        }
        out.add("[" + String.join(",", cols) + "]");
      }
    }
    rows.close();
    return "{\"schema\":" + q(schema.toString()) + ",\"writer_version\":" + q(reader.getWriterVersion().toString())
        + ",\"rows\":[" + String.join(",", out) + "]}";
  }

  static final String ALL_TYPES = "struct<b:boolean,i8:tinyint,i16:smallint,i32:int,i64:bigint,"
      + "f:float,d:double,s:string,c:char(5),vc:varchar(6),bin:binary,dec:decimal(10,3),"
      + "dec38:decimal(38,6),dt:date,ts:timestamp,tsl:timestamp with local time zone,"
      + "l:array<int>,m:map<string,double>,st:struct<x:int,y:string>,u:uniontype<int,string>>";

  // Row r of the all-types file; every third row of a column is null, in turn.
  static List<String> NAMES;

  static ColumnVector col(ColumnVector[] c, String name) {
    int i = NAMES.indexOf(name);
    return i < 0 ? new TimestampColumnVector(1 << 10) : c[i];  // tsl, before ORC 1.6
  }

  static void fill(VectorizedRowBatch batch, int r, int n) {
    ColumnVector[] c = batch.cols;
    for (int i = 0; i < c.length; i++) {
      if ((r + i) % 7 == 3) { c[i].noNulls = false; c[i].isNull[r] = true; continue; }
      c[i].isNull[r] = false;
    }
    ((LongColumnVector) col(c, "b")).vector[r] = r % 2;
    ((LongColumnVector) col(c, "i8")).vector[r] = (byte) (r * 37 - 128);
    ((LongColumnVector) col(c, "i16")).vector[r] = (short) (r * 9001 - 32768);
    ((LongColumnVector) col(c, "i32")).vector[r] = r * 123456789 - Integer.MAX_VALUE;
    ((LongColumnVector) col(c, "i64")).vector[r] = (long) r * 987654321987L - Long.MAX_VALUE / 3;
    ((DoubleColumnVector) col(c, "f")).vector[r] = r * 1.25f - 3.5f;
    ((DoubleColumnVector) col(c, "d")).vector[r] = r * -2.0e-3 + 1e10;
    byte[] s = ("héllo wörld " + r).getBytes(StandardCharsets.UTF_8);
    ((BytesColumnVector) col(c, "s")).setVal(r, s);
    ((BytesColumnVector) col(c, "c")).setVal(r, ("c" + r).getBytes(StandardCharsets.UTF_8));
    ((BytesColumnVector) col(c, "vc")).setVal(r, ("vc" + r * 11).getBytes(StandardCharsets.UTF_8));
    ((BytesColumnVector) col(c, "bin")).setVal(r, new byte[] {(byte) r, 0, (byte) 255, (byte) (r * 7)});
    ((DecimalColumnVector) col(c, "dec")).set(r, HiveDecimal.create(new BigDecimal((r * 12345 - 40000) + ".5").divide(new BigDecimal(r % 3 == 0 ? 1 : 10))));
    ((DecimalColumnVector) col(c, "dec38")).set(r, HiveDecimal.create(new BigDecimal("12345678901234567890123456789." + (100000 + r))));
    ((LongColumnVector) col(c, "dt")).vector[r] = -800 + r * 4567;  // days: 1967..2037
    // 1969-12-31 23:59:59.5 (a negative instant with a fraction) and DST-crossing times
    long[] millis = {-500L, 1_700_000_000_123L, 1_710_054_000_000L, 0L, 1_730_624_400_999L,
        -1_000_000_000_001L, 946_684_800_000L};
    Timestamp t = new Timestamp(millis[r % millis.length] + r * 3_600_000L * 24 * 30);
    t.setNanos((int) (Math.floorMod(t.getTime(), 1000L) * 1_000_000 + r * 1001));
    ((TimestampColumnVector) col(c, "ts")).set(r, t);
    ((TimestampColumnVector) col(c, "tsl")).set(r, t);
    ListColumnVector l = (ListColumnVector) col(c, "l");
    int lo = r == 0 ? 0 : (int) (l.offsets[r - 1] + l.lengths[r - 1]);
    l.offsets[r] = lo; l.lengths[r] = r % 4; l.childCount = lo + r % 4;
    l.child.ensureSize(l.childCount, true);
    for (int k = 0; k < r % 4; k++) ((LongColumnVector) l.child).vector[lo + k] = r * 10 + k;
    MapColumnVector m = (MapColumnVector) col(c, "m");
    int mo = r == 0 ? 0 : (int) (m.offsets[r - 1] + m.lengths[r - 1]);
    m.offsets[r] = mo; m.lengths[r] = r % 3; m.childCount = mo + r % 3;
    m.keys.ensureSize(m.childCount, true);
    m.values.ensureSize(m.childCount, true);
    for (int k = 0; k < r % 3; k++) {
      ((BytesColumnVector) m.keys).setVal(mo + k, ("k" + k).getBytes(StandardCharsets.UTF_8));
      ((DoubleColumnVector) m.values).vector[mo + k] = r + k / 4.0;
    }
    StructColumnVector st = (StructColumnVector) col(c, "st");
    ((LongColumnVector) st.fields[0]).vector[r] = -r;
    ((BytesColumnVector) st.fields[1]).setVal(r, ("y" + r).getBytes(StandardCharsets.UTF_8));
    UnionColumnVector u = (UnionColumnVector) col(c, "u");
    u.tags[r] = r % 2;
    if (r % 2 == 0) ((LongColumnVector) u.fields[0]).vector[r] = r * 3;
    else ((BytesColumnVector) u.fields[1]).setVal(r, ("u" + r).getBytes(StandardCharsets.UTF_8));
  }

  static void write(String out, String name, String type, int n, boolean hiveNames, OrcFile.WriterOptions extra)
      throws Exception {
    TypeDescription schema = TypeDescription.fromString(type);
    Path path = new Path(out, name);
    Writer w = OrcFile.createWriter(path, extra.setSchema(schema).overwrite(true));
    VectorizedRowBatch batch = schema.createRowBatch(n);
    for (int r = 0; r < n; r++) fill(batch, r, n);
    batch.size = n;
    w.addRowBatch(batch);
    w.close();
    System.out.println("{\"file\":" + q(name) + ",\"read\":" + readBack(path) + "}");
  }

  public static void main(String[] args) throws Exception {
    if (args[0].equals("--read")) {
      for (int i = 1; i < args.length; i++) {
        Path path = new Path(args[i]);
        System.out.println("{\"file\":" + q(path.getName()) + ",\"read\":" + readBack(path) + "}");
      }
      return;
    }
    String out = args[0];
    String prefix = args[1];
    boolean instant = false;
    for (TypeDescription.Category cat : TypeDescription.Category.values()) {
      instant |= cat.name().equals("TIMESTAMP_INSTANT");
    }
    String all = instant ? ALL_TYPES : ALL_TYPES.replace(",tsl:timestamp with local time zone", "");
    NAMES = new ArrayList<>(TypeDescription.fromString(all).getFieldNames());
    write(out, prefix + "_alltypes.zlib.orc", all, 23, false,
        OrcFile.writerOptions(CONF).compress(org.apache.orc.CompressionKind.ZLIB));
    write(out, prefix + "_alltypes_v0_11.zlib.orc", all, 23, false,
        OrcFile.writerOptions(CONF).compress(org.apache.orc.CompressionKind.ZLIB)
            .version(OrcFile.Version.V_0_11));
    // Hive before 2.0 names its columns _col0, _col1, ...: engines map them by position.
    String hive = all;
    for (int i = 0; i < NAMES.size(); i++) hive = hive.replaceFirst("([<,])" + NAMES.get(i) + ":", "$1_col" + i + ":");
    write(out, prefix + "_hive_positional.snappy.orc", hive, 23, true,
        OrcFile.writerOptions(CONF).compress(org.apache.orc.CompressionKind.SNAPPY));
  }
}
