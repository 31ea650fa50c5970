"""Tests of the canonical row rendering and of the committed golden files.

Run: ~/.cache/ariadne-interop/venv/bin/python -m unittest discover -s interop/scripts -p 'test_*.py'
"""

import datetime
import decimal
import glob
import json
import os
import random
import struct
import unittest

import pyarrow as pa

import canonical

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "..", "..", "delta", "testdata", "golden")


class FloatTests(unittest.TestCase):
    def test_double_matches_python_repr(self):
        rng = random.Random(7)
        vals = [0.0, 1.0, 1e16, 9999999999999998.0, 1e-4, 1e-5, 123456789.0, 0.1, 5e-324, -1234.5678, 1e22]
        vals += [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(20000)]
        for v in vals:
            if v != v or v in (float("inf"), float("-inf")):
                continue
            self.assertEqual(canonical.format_float(v), repr(v), v)

    def test_float32_shortest(self):
        cases = [(0.1, "0.1"), (1.0, "1.0"), (3.4028234663852886e38, "3.4028235e+38"), (1e-45, "1e-45"),
                 (16777216.0, "16777216.0"), (0.3, "0.3"), (1e20, "1e+20"), (-2.5, "-2.5")]
        for x, want in cases:
            self.assertEqual(canonical.format_float(canonical._f32(x), 32), want, x)

    def test_specials(self):
        self.assertEqual(canonical.format_float(float("nan")), '"NaN"')
        self.assertEqual(canonical.format_float(float("inf")), '"Infinity"')
        self.assertEqual(canonical.format_float(float("-inf")), '"-Infinity"')
        self.assertEqual(canonical.format_float(-0.0), "-0.0")


class TemporalTests(unittest.TestCase):
    def test_dates_match_calendar(self):
        epoch = datetime.date(1970, 1, 1)
        for n in range(-719162, 2932897, 331):
            self.assertEqual(canonical.format_date(n), (epoch + datetime.timedelta(days=n)).isoformat())
        self.assertEqual(canonical.format_date(-719528), "0000-01-01")

    def test_micros(self):
        self.assertEqual(canonical.format_micros(-1, True), "1969-12-31T23:59:59.999999Z")
        self.assertEqual(canonical.format_micros(253402214400000000, False), "9999-12-31T00:00:00.000000")

    def test_timestamp_units_and_ntz(self):
        t = pa.table({"a": pa.array([0, 1500], pa.timestamp("ms", tz="UTC")),
                      "b": pa.array([-1, 2], pa.timestamp("ns"))})
        self.assertEqual(canonical.render_table(t, ["a", "b"]), [
            '{"a":"1970-01-01T00:00:00.000000Z","b":"1969-12-31T23:59:59.999999"}',
            '{"a":"1970-01-01T00:00:01.500000Z","b":"1970-01-01T00:00:00.000000"}'])


class ValueTests(unittest.TestCase):
    def test_decimal(self):
        t = pa.table({"d": pa.array([decimal.Decimal("-5.678"), decimal.Decimal("0"), None,
                                     decimal.Decimal("12345678901234567890123456789012.345")],
                                    pa.decimal128(38, 3))})
        self.assertEqual(sorted(canonical.render_table(t, ["d"])), sorted([
            '{"d":"-5.678"}', '{"d":"0.000"}', '{"d":null}', '{"d":"12345678901234567890123456789012.345"}']))

    def test_nested_and_strings(self):
        typ = pa.struct([("s", pa.string()), ("m", pa.map_(pa.string(), pa.int32())),
                         ("l", pa.list_(pa.binary()))])
        arr = pa.array([{"s": 'q"\\\n\x01é\u2028<', "m": [("b", 2), ("a", None)], "l": [b"\x00\xff", None]},
                        None], typ)
        t = pa.table({"x": arr.slice(0, 2)})
        want = '{"x":{"s":"q\\"\\\\\\n\\u0001é\u2028<","m":[["a",null],["b",2]],"l":["AP8=",null]}}'
        self.assertEqual(canonical.render_table(t, ["x"]), ['{"x":null}', want])

    def test_sliced_lists(self):
        arr = pa.array([[1], [2, 3], None, [4]], pa.list_(pa.int64())).slice(1, 3)
        self.assertEqual(canonical.render_table(pa.table({"l": arr}), ["l"]),
                         ['{"l":[2,3]}', '{"l":[4]}', '{"l":null}'])


class GoldenTests(unittest.TestCase):
    def test_golden_files_are_consistent(self):
        files = sorted(glob.glob(os.path.join(GOLDEN, "*.json")))
        self.assertGreaterEqual(len(files), 50)
        for path in files:
            with open(path, encoding="utf-8") as f:
                g = json.load(f)
            if g["error"] is not None:
                self.assertIsNone(g["rows_sha256"], path)
                continue
            if g["rows"] is not None:
                self.assertEqual(len(g["rows"]), g["num_rows"], path)
                lines = [json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in g["rows"]]
                self.assertEqual(lines, sorted(lines, key=lambda s: s.encode("utf-8")), path)
                self.assertEqual(canonical.rows_sha256(lines), g["rows_sha256"], path)


if __name__ == "__main__":
    unittest.main()
