// Test oracle for tests/codec/test_encode_java.py: runs ORC Java's own stream encoders
// (from the orc-core jar PySpark bundles) on the cases the test sends, so that aorc's
// encoders can be compared with them byte for byte.
//
// Run as a single-file program: java -cp 'pyspark/jars/*' OrcEncodeOracle.java < in > out
// Input (big-endian), repeated until end of input:
//   op int8, flags int8, n int32, n values (int64; op 6: n pairs of int64 low, high),
//   k int32, k boundary indexes int64 (sorted, each in [0, n])
// Output per case: length int32, the encoded bytes, m int32, m recorded positions int64.
// op: 1 RLE v2 (flags bit 0 signed, bit 1 aligned bit packing), 2 RLE v1 (bit 0 signed),
//     3 byte RLE, 4 boolean bit field, 5 varints (bit 0 signed), 6 zigzag varint128,
//     7 timestamp nanos formatting (output: n int64 values instead of bytes).

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.lang.reflect.Method;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.apache.orc.impl.BitFieldWriter;
import org.apache.orc.impl.IntegerWriter;
import org.apache.orc.impl.PositionRecorder;
import org.apache.orc.impl.PositionedOutputStream;
import org.apache.orc.impl.RunLengthByteWriter;
import org.apache.orc.impl.RunLengthIntegerWriter;
import org.apache.orc.impl.RunLengthIntegerWriterV2;
import org.apache.orc.impl.SerializationUtils;

public class OrcEncodeOracle {

  /** An uncompressed stream whose position is the number of bytes written. */
  static final class Sink extends PositionedOutputStream {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    @Override public void write(int b) { bytes.write(b); }
    @Override public void write(byte[] b, int off, int len) { bytes.write(b, off, len); }
    @Override public void getPosition(PositionRecorder recorder) {
      recorder.addPosition(bytes.size());
    }
    @Override public long getBufferSize() { return 0; }
    @Override public void changeIv(Consumer<byte[]> modifier) { }
  }

  interface Step { void write(int i) throws IOException; }
  interface Mark { void record(PositionRecorder r) throws IOException; }

  static void run(long[] bounds, int n, Step step, Mark mark, List<Long> pos) throws IOException {
    int k = 0;
    for (int i = 0; i < n; i++) {
      while (k < bounds.length && bounds[k] == i) { mark.record(pos::add); k++; }
      step.write(i);
    }
    while (k < bounds.length) { mark.record(pos::add); k++; }
  }

  public static void main(String[] args) throws Exception {
    DataInputStream in = new DataInputStream(System.in);
    DataOutputStream out = new DataOutputStream(System.out);
    Method formatNanos = Class.forName("org.apache.orc.impl.writer.TimestampTreeWriter")
        .getDeclaredMethod("formatNanos", int.class);
    formatNanos.setAccessible(true);
    while (true) {
      int op;
      try {
        op = in.readByte();
      } catch (EOFException e) {
        break;
      }
      int flags = in.readByte();
      int n = in.readInt();
      long[] vals = new long[op == 6 ? 2 * n : n];
      for (int i = 0; i < vals.length; i++) vals[i] = in.readLong();
      long[] bounds = new long[in.readInt()];
      for (int i = 0; i < bounds.length; i++) bounds[i] = in.readLong();
      boolean signed = (flags & 1) != 0;
      Sink sink = new Sink();
      List<Long> pos = new ArrayList<>();
      SerializationUtils utils = new SerializationUtils();
      switch (op) {
        case 1:
        case 2: {
          IntegerWriter w = op == 1
              ? new RunLengthIntegerWriterV2(sink, signed, (flags & 2) != 0)
              : new RunLengthIntegerWriter(sink, signed);
          run(bounds, n, i -> w.write(vals[i]), w::getPosition, pos);
          w.flush();
          break;
        }
        case 3: {
          RunLengthByteWriter w = new RunLengthByteWriter(sink);
          run(bounds, n, i -> w.write((byte) vals[i]), w::getPosition, pos);
          w.flush();
          break;
        }
        case 4: {
          BitFieldWriter w = new BitFieldWriter(sink, 1);
          run(bounds, n, i -> w.write((int) vals[i]), w::getPosition, pos);
          w.flush();
          break;
        }
        case 5:
          run(bounds, n, i -> {
            if (signed) utils.writeVslong(sink, vals[i]); else utils.writeVulong(sink, vals[i]);
          }, sink::getPosition, pos);
          break;
        case 6:
          run(bounds, n, i -> {
            BigInteger lo = new BigInteger(Long.toUnsignedString(vals[2 * i]));
            BigInteger v = BigInteger.valueOf(vals[2 * i + 1]).shiftLeft(64).or(lo);
            SerializationUtils.writeBigInteger(sink, v);
          }, sink::getPosition, pos);
          break;
        case 7: {
          DataOutputStream d = new DataOutputStream(sink);
          for (int i = 0; i < n; i++) d.writeLong((long) formatNanos.invoke(null, (int) vals[i]));
          d.flush();
          break;
        }
        default:
          throw new IllegalArgumentException("unknown op " + op);
      }
      byte[] b = sink.bytes.toByteArray();
      out.writeInt(b.length);
      out.write(b);
      out.writeInt(pos.size());
      for (long p : pos) out.writeLong(p);
    }
    out.flush();
  }
}
