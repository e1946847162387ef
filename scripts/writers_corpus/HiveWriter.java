// Writes a file with Hive 2.3's own ORC writer (org.apache.hadoop.hive.ql.io.orc in PySpark's
// hive-exec jar, driven by object inspectors as Hive's OrcSerde drives it) with the column
// names Hive gives files it writes for a query (_col0, _col1, ...), and prints what ORC
// Java reads back (CorpusWriter.readBack). Usage: java HiveWriter OUT_DIR
import java.math.BigDecimal;
import java.sql.Date;
import java.sql.Timestamp;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.common.type.HiveDecimal;
import org.apache.hadoop.hive.ql.io.orc.OrcFile;
import org.apache.hadoop.hive.ql.io.orc.Writer;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspector;
import org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorFactory;

public class HiveWriter {
  public static class Row {
    public Integer _col0;
    public Long _col1;
    public String _col2;
    public Double _col3;
    public HiveDecimal _col4;
    public Timestamp _col5;
    public Date _col6;
    public List<Integer> _col7;
    public Map<String, Integer> _col8;
    public Boolean _col9;
  }

  public static void main(String[] args) throws Exception {
    ObjectInspector inspector = ObjectInspectorFactory.getReflectionObjectInspector(
        Row.class, ObjectInspectorFactory.ObjectInspectorOptions.JAVA);
    String name = "hive_2.3_writer_positional.zlib.orc";
    Path path = new Path(args[0], name);
    OrcFile.WriterOptions options = OrcFile.writerOptions(CorpusWriter.CONF).inspector(inspector);
    options.compress(org.apache.orc.CompressionKind.ZLIB);
    options.overwrite(true);
    Writer writer = OrcFile.createWriter(path, options);
    for (int r = 0; r < 19; r++) {
      Row row = new Row();
      if (r % 6 != 2) {
        row._col0 = r * 1000003 - 7;
        row._col1 = (long) r * -98765432123L;
        row._col2 = "hive " + r;
        row._col3 = r / 8.0 - 1;
        row._col4 = HiveDecimal.create(new BigDecimal((r * 314159 - 100) + "." + r));
        Timestamp t = new Timestamp(1_500_000_000_000L + r * 86_400_000L * 40 - (r % 3) * 1_000_000_000_000L);
        t.setNanos(r * 111_111_111 % 1_000_000_000);
        row._col5 = t;
        row._col6 = new Date(t.getTime());
        row._col7 = Arrays.asList(r, -r, r * r);
        Map<String, Integer> m = new LinkedHashMap<>();
        for (int k = 0; k < r % 3; k++) m.put("k" + k, k * r);
        row._col8 = m;
        row._col9 = r % 2 == 0;
      }
      writer.addRow(row);
    }
    writer.close();
    System.out.println("{\"file\":" + CorpusWriter.q(name) + ",\"read\":"
        + CorpusWriter.readBack(path) + "}");
  }
}
