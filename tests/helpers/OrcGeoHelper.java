// Test helper: ORC Java 2.3 (ORC-1903, from the PySpark jars) writing and reading GEOMETRY and
// GEOGRAPHY columns, for aorc's geospatial tests (tests/helpers/orc_java_enc.py compiles it).
//   write FILE COLSPEC STRIDE STRIPE_ROWS COMPRESS INPUT
//       COLSPEC: columns separated by ';', each NAME|KIND[|CRS[|ALGORITHM]] with KIND one of
//       geometry, geography, bigint; INPUT: one row a line, cells tab-separated, WKB in hex
//       (bigint in decimal), an empty cell is null
//   read FILE
//       "type ID JSON" per column, the rows as JSON arrays (WKB in hex), then "stats ID JSON"
//       (file statistics) and "stripe N ID JSON" (stripe statistics) per geospatial column
//   batch FILE   one command per line (arguments tab-separated), each one's output after "@@@ N"
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.ql.exec.vector.BytesColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.ColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.LongColumnVector;
import org.apache.hadoop.hive.ql.exec.vector.VectorizedRowBatch;
import org.apache.orc.ColumnStatistics;
import org.apache.orc.CompressionKind;
import org.apache.orc.GeospatialColumnStatistics;
import org.apache.orc.OrcFile;
import org.apache.orc.Reader;
import org.apache.orc.RecordReader;
import org.apache.orc.StripeStatistics;
import org.apache.orc.TypeDescription;
import org.apache.orc.Writer;
import org.apache.orc.geospatial.BoundingBox;

public class OrcGeoHelper {
  static String json(String s) {
    if (s == null) return "null";
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  static byte[] unhex(String h) {
    byte[] out = new byte[h.length() / 2];
    for (int i = 0; i < out.length; ++i) {
      out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }

  static String hex(byte[] b, int start, int len) {
    StringBuilder s = new StringBuilder();
    for (int i = start; i < start + len; ++i) s.append(String.format("%02x", b[i]));
    return s.toString();
  }

  static TypeDescription schema(String spec) {
    TypeDescription root = TypeDescription.createStruct();
    for (String col : spec.split(";")) {
      String[] p = col.split("\\|", -1);
      TypeDescription t;
      switch (p[1]) {
        case "bigint": t = TypeDescription.createLong(); break;
        case "geometry": t = TypeDescription.createGeometry(); break;
        case "geography": t = TypeDescription.createGeography(); break;
        default: throw new IllegalArgumentException(p[1]);
      }
      if (p.length > 2 && !p[2].isEmpty()) t.withCRS(p[2]);
      if (p.length > 3 && !p[3].isEmpty()) {
        t.withEdgeInterpolationAlgorithm(TypeDescription.EdgeInterpolationAlgorithm.valueOf(p[3]));
      }
      root.addField(p[0], t);
    }
    return root;
  }

  static void write(String[] args) throws Exception {
    Configuration conf = new Configuration();
    conf.set("orc.stripe.row.count", args[4]);
    TypeDescription schema = schema(args[2]);
    Writer w = OrcFile.createWriter(new Path(args[1]), OrcFile.writerOptions(conf)
        .setSchema(schema).overwrite(true).rowIndexStride(Integer.parseInt(args[3]))
        .compress(CompressionKind.valueOf(args[5])));
    VectorizedRowBatch batch = schema.createRowBatch(1000);
    for (String line : Files.readAllLines(Paths.get(args[6]), StandardCharsets.US_ASCII)) {
      String[] cells = line.split("\t", -1);
      int r = batch.size++;
      for (int c = 0; c < cells.length; ++c) {
        ColumnVector v = batch.cols[c];
        if (cells[c].isEmpty()) {
          v.noNulls = false;
          v.isNull[r] = true;
        } else if (v instanceof LongColumnVector) {
          ((LongColumnVector) v).vector[r] = Long.parseLong(cells[c]);
        } else {
          ((BytesColumnVector) v).setVal(r, unhex(cells[c]));
        }
      }
      if (batch.size == batch.getMaxSize()) {
        w.addRowBatch(batch);
        batch.reset();
      }
    }
    if (batch.size > 0) w.addRowBatch(batch);
    w.close();
  }

  static String d(double x) {
    return json(Double.toString(x));
  }

  static String stats(ColumnStatistics s) {
    StringBuilder b = new StringBuilder("{\"n\":" + s.getNumberOfValues()
        + ",\"hasNull\":" + s.hasNull());
    if (s instanceof GeospatialColumnStatistics) {
      GeospatialColumnStatistics g = (GeospatialColumnStatistics) s;
      BoundingBox bb = g.getBoundingBox();
      if (bb != null) b.append(",\"bbox\":[").append(d(bb.getXMin())).append(',').append(d(bb.getXMax()))
          .append(',').append(d(bb.getYMin())).append(',').append(d(bb.getYMax()))
          .append(',').append(d(bb.getZMin())).append(',').append(d(bb.getZMax()))
          .append(',').append(d(bb.getMMin())).append(',').append(d(bb.getMMax()))
          .append("],\"valid\":").append(bb.isValid());
      if (g.getGeospatialTypes() != null) {
        List<Integer> types = new ArrayList<>(g.getGeospatialTypes().getTypes());
        java.util.Collections.sort(types);
        b.append(",\"types\":").append(types);
      }
    }
    return b.append('}').toString();
  }

  static void read(String[] args) throws Exception {
    Reader reader = OrcFile.createReader(new Path(args[1]), OrcFile.readerOptions(new Configuration()));
    TypeDescription schema = reader.getSchema();
    for (TypeDescription t : schema.getChildren()) {
      String alg = t.getEdgeInterpolationAlgorithm() == null ? null
          : t.getEdgeInterpolationAlgorithm().name();
      System.out.println("type " + t.getId() + " {\"string\":" + json(t.toString())
          + ",\"crs\":" + json(t.getCrs()) + ",\"algorithm\":" + json(alg) + "}");
    }
    VectorizedRowBatch batch = schema.createRowBatch();
    RecordReader rows = reader.rows();
    while (rows.nextBatch(batch)) {
      for (int r = 0; r < batch.size; ++r) {
        StringBuilder line = new StringBuilder("[");
        for (int c = 0; c < batch.numCols; ++c) {
          ColumnVector v = batch.cols[c];
          int i = v.isRepeating ? 0 : r;
          if (c > 0) line.append(',');
          if (!v.noNulls && v.isNull[i]) line.append("null");
          else if (v instanceof LongColumnVector) line.append(((LongColumnVector) v).vector[i]);
          else {
            BytesColumnVector b = (BytesColumnVector) v;
            line.append('"').append(hex(b.vector[i], b.start[i], b.length[i])).append('"');
          }
        }
        System.out.println(line.append(']'));
      }
    }
    rows.close();
    ColumnStatistics[] file = reader.getStatistics();
    for (int c = 1; c < file.length; ++c) {
      System.out.println("stats " + c + " " + stats(file[c]));
    }
    List<StripeStatistics> stripes = reader.getStripeStatistics();
    for (int s = 0; s < stripes.size(); ++s) {
      ColumnStatistics[] cs = stripes.get(s).getColumnStatistics();
      for (int c = 1; c < cs.length; ++c) {
        System.out.println("stripe " + s + " " + c + " " + stats(cs[c]));
      }
    }
  }

  static void run(String[] args) throws Exception {
    switch (args[0]) {
      case "read": read(args); break;
      case "write": write(args); break;
      default: throw new IllegalArgumentException(args[0]);
    }
  }

  public static void main(String[] args) throws Exception {
    if (!args[0].equals("batch")) {
      run(args);
      return;
    }
    List<String> lines = Files.readAllLines(Paths.get(args[1]));
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
