"""Canonical row rendering shared by the interop scripts.

The rules are specified in docs/interop.md, section "Canonical rows"; the Go side
implements the same rules. Values are rendered from Arrow arrays, guided by the
Arrow type, never by Python's default conversions (which lose precision for
timestamps outside the nanosecond range and render decimals in exponent form).
"""

import base64
import hashlib
import json
import math
import struct

import pyarrow as pa

__all__ = ["render_table", "rows_sha256", "format_float", "json_string"]


def json_string(s):
    """JSON string literal exactly as json.dumps(s, ensure_ascii=False)."""
    return json.dumps(s, ensure_ascii=False)


def _layout(negative, digits, exp):
    """Python repr layout of a shortest decimal: digits 'd1d2..dn' times 10**exp (d1.d2.. form)."""
    sign = "-" if negative else ""
    if -4 <= exp < 16:
        if exp >= 0:
            intpart = digits[: exp + 1].ljust(exp + 1, "0")
            frac = digits[exp + 1:] or "0"
        else:
            intpart = "0"
            frac = "0" * (-exp - 1) + digits
        return sign + intpart + "." + frac
    mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return sign + mant + "e" + ("-" if exp < 0 else "+") + "%02d" % abs(exp)


def _f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def format_float(x, bits=64):
    """Shortest round-trip decimal of x (a float32 when bits == 32) in Python repr layout.

    NaN and infinities render as the JSON strings "NaN", "Infinity", "-Infinity".
    Returns the JSON fragment (so specials come back quoted).
    """
    if math.isnan(x):
        return '"NaN"'
    if math.isinf(x):
        return '"Infinity"' if x > 0 else '"-Infinity"'
    negative = math.copysign(1.0, x) < 0
    ax = abs(x)
    if ax == 0.0:
        return ("-" if negative else "") + "0.0"
    target = _f32(ax) if bits == 32 else ax
    for prec in range(1, 18):
        s = "%.*e" % (prec - 1, ax)
        back = float(s)
        if bits == 32:
            try:
                back = _f32(back)
            except OverflowError:  # rounds past the float32 range: not this precision
                continue
        if back == target:
            break
    mant, e = s.split("e")
    digits = mant.replace(".", "").rstrip("0") or "0"
    return _layout(negative, digits, int(e))


def _civil_from_days(z):
    """Proleptic Gregorian (y, m, d) from days since 1970-01-01 (H. Hinnant's algorithm)."""
    z += 719468
    era = z // 146097  # floor division (Python); C/Go need the (z - 146096) / 146097 form for z < 0
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def _year(y):
    return ("-%04d" % -y) if y < 0 else ("%04d" % y)


def format_date(days):
    y, m, d = _civil_from_days(days)
    return "%s-%02d-%02d" % (_year(y), m, d)


def format_micros(us, utc):
    days, rem = divmod(us, 86_400_000_000)
    secs, frac = divmod(rem, 1_000_000)
    hh, rest = divmod(secs, 3600)
    mm, ss = divmod(rest, 60)
    return "%sT%02d:%02d:%02d.%06d%s" % (format_date(days), hh, mm, ss, frac, "Z" if utc else "")


def format_decimal(unscaled, scale):
    """Plain decimal text of unscaled * 10**-scale with exactly `scale` fraction digits."""
    sign = "-" if unscaled < 0 else ""
    digits = str(abs(unscaled))
    if scale <= 0:
        return sign + digits + "0" * (-scale)
    digits = digits.rjust(scale + 1, "0")
    return sign + digits[:-scale] + "." + digits[-scale:]


def _unscaled(d, scale):
    """Exact unscaled integer of a decimal.Decimal at the column scale (no context rounding)."""
    sign, digits, exp = d.as_tuple()
    n = int("".join(map(str, digits)) or "0")
    shift = exp + scale
    n = n * 10 ** shift if shift >= 0 else n // 10 ** (-shift)
    return -n if sign else n


def _render_value(v, t):
    """Render one Python value v (produced by _pylist) of Arrow type t as a JSON fragment."""
    if v is None:
        return "null"
    if pa.types.is_boolean(t):
        return "true" if v else "false"
    if pa.types.is_integer(t):
        return str(int(v))
    if pa.types.is_float32(t):
        return format_float(v, 32)
    if pa.types.is_floating(t):
        return format_float(v, 64)
    if pa.types.is_decimal(t):
        return json_string(format_decimal(v, t.scale))
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return json_string(v)
    if (pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)
            or pa.types.is_fixed_size_binary(t)):
        return json_string(base64.b64encode(v).decode("ascii"))
    if pa.types.is_date(t):
        return json_string(format_date(v))
    if pa.types.is_timestamp(t):
        return json_string(format_micros(v, t.tz is not None))
    if pa.types.is_map(t):
        pairs = [(_render_value(k, t.key_type), _render_value(x, t.item_type)) for k, x in v]
        pairs.sort(key=lambda p: p[0].encode("utf-8"))
        return "[" + ",".join("[" + k + "," + x + "]" for k, x in pairs) + "]"
    if (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
            or pa.types.is_list_view(t) or pa.types.is_large_list_view(t)):
        return "[" + ",".join(_render_value(x, t.value_type) for x in v) + "]"
    if pa.types.is_struct(t):
        return "{" + ",".join(
            json_string(t.field(i).name) + ":" + _render_value(v[i], t.field(i).type)
            for i in range(t.num_fields)) + "}"
    if pa.types.is_dictionary(t):
        return _render_value(v, t.value_type)
    raise TypeError("canonical rendering: unsupported Arrow type %s" % t)


def _pylist(arr):
    """Python values of an Arrow array with the representation _render_value expects.

    Timestamps become int64 microseconds, dates int32 days, decimals (unscaled int),
    structs positional lists, maps lists of (key, value).
    """
    t = arr.type
    if pa.types.is_dictionary(t):
        return _pylist(arr.dictionary_decode())
    if pa.types.is_timestamp(t):
        if t.unit == "s":
            mult = 1_000_000
        elif t.unit == "ms":
            mult = 1000
        else:
            mult = None
        ints = arr.view(pa.int64()).to_pylist()
        if t.unit == "ns":
            return [None if x is None else x // 1000 for x in ints]
        return [None if x is None else x * mult if mult else x for x in ints]
    if pa.types.is_date32(t):
        return arr.view(pa.int32()).to_pylist()
    if pa.types.is_date64(t):
        return [None if x is None else x // 86_400_000 for x in arr.view(pa.int64()).to_pylist()]
    if pa.types.is_decimal(t):
        return [None if d is None else _unscaled(d, t.scale) for d in arr.to_pylist()]
    if pa.types.is_struct(t):
        children = [_pylist(arr.field(i)) for i in range(t.num_fields)]
        valid = arr.is_valid().to_pylist()
        return [[c[r] for c in children] if valid[r] else None for r in range(len(arr))]
    if pa.types.is_map(t):
        keys = _pylist(arr.values.field(0))
        items = _pylist(arr.values.field(1))
        offs = arr.offsets.to_pylist()
        valid = arr.is_valid().to_pylist()
        return [list(zip(keys[offs[r]:offs[r + 1]], items[offs[r]:offs[r + 1]])) if valid[r] else None
                for r in range(len(arr))]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        vals = _pylist(arr.values)
        offs = arr.offsets.to_pylist()
        valid = arr.is_valid().to_pylist()
        # arr.values is the whole child array: offsets index into it directly.
        return [vals[offs[r]:offs[r + 1]] if valid[r] else None for r in range(len(arr))]
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t) or pa.types.is_fixed_size_list(t):
        return _pylist(arr.cast(pa.large_list(t.value_type)))
    return arr.to_pylist()


def render_table(table, names):
    """Canonical row lines of an Arrow table, columns in the order of names, sorted by UTF-8 bytes."""
    table = table.combine_chunks()
    cols = []
    for name in names:
        idx = table.schema.get_field_index(name)
        if idx < 0:
            raise KeyError("column %r missing from scan result" % name)
        col = table.column(idx)
        arr = col.chunk(0) if col.num_chunks == 1 else pa.concat_arrays(col.chunks) if col.num_chunks else pa.array([], type=col.type)
        cols.append((json_string(name), arr.type, _pylist(arr)))
    lines = []
    for r in range(table.num_rows):
        lines.append("{" + ",".join(k + ":" + _render_value(vals[r], t) for k, t, vals in cols) + "}")
    lines.sort(key=lambda s: s.encode("utf-8"))
    return lines


def rows_sha256(lines):
    """Hex SHA-256 of the canonical lines joined by '\\n' (no trailing newline)."""
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
