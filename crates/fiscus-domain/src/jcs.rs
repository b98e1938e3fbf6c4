//! RFC 8785 JSON Canonicalization Scheme (JCS).
//!
//! Evidence hashes must be recomputable by anyone outside Fiscus, so the bytes that are hashed follow a public
//! standard rather than whatever serde_json happens to print: object members sorted by their UTF-16 code
//! units, no insignificant white space, strings escaped as ECMAScript's `JSON.stringify` does, and every
//! number printed as ECMAScript's `Number.prototype.toString` prints an IEEE 754 double.

use serde_json::Value;
use std::fmt::Write as _;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JcsError {
    /// JSON has no representation for NaN or the infinities; I-JSON forbids them.
    #[error("number is not finite")]
    NonFiniteNumber,
}

/// The canonical form of `value`.
pub fn canonicalize(value: &Value) -> Result<String, JcsError> {
    let mut out = String::new();
    write_value(value, &mut out)?;
    Ok(out)
}

fn write_value(value: &Value, out: &mut String) -> Result<(), JcsError> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => {
            // JCS treats every number as an IEEE 754 double, integers included.
            let f = n.as_f64().ok_or(JcsError::NonFiniteNumber)?;
            write_number(f, out)?;
        }
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
            out.push('{');
            for (i, (key, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_value(item, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{08}' => out.push_str("\\b"),
            '\u{09}' => out.push_str("\\t"),
            '\u{0a}' => out.push_str("\\n"),
            '\u{0c}' => out.push_str("\\f"),
            '\u{0d}' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// ECMAScript `Number.prototype.toString` (ECMA-262 §6.1.6.1.20) for a finite double.
///
/// Rust's `{:e}` formatting yields the shortest digit string that round-trips, which is the digit string
/// ECMAScript requires; only the layout around those digits differs, and that is what this function decides.
pub fn write_number(f: f64, out: &mut String) -> Result<(), JcsError> {
    if !f.is_finite() {
        return Err(JcsError::NonFiniteNumber);
    }
    if f == 0.0 {
        // Both +0 and -0 print as "0".
        out.push('0');
        return Ok(());
    }
    if f < 0.0 {
        out.push('-');
    }
    // Ryu's shortest round-trip digits (the digits ECMAScript requires), laid out below; formatted on the stack,
    // since the canonical form of a large request formats tens of thousands of numbers.
    let mut buffer = ryu::Buffer::new();
    let (digits, exponent) = shortest_digits(buffer.format_finite(f.abs()));
    // Two shortest digit strings can tie only when they have 16 digits or more: k digits one unit apart are
    // 10^(n-k) apart, more than the 2^-52 relative spacing of doubles whenever k <= 15.
    let tied;
    let digits: &str = if digits.len() >= 16 {
        let mut d = digits.as_str().to_string();
        break_tie_to_even(f.abs(), exponent, &mut d);
        tied = d;
        &tied
    } else {
        digits.as_str()
    };
    let k = digits.len() as i32;
    // ECMAScript's n: the value is 0.d1d2…dk × 10^n.
    let n = exponent + 1;
    if k <= n && n <= 21 {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        let _ = write!(out, "e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    Ok(())
}

/// The significant digits of a positive number written by Ryu (`123.0`, `0.001`, `1.5e16`, `5e-324`) and
/// the decimal exponent of its first digit: the value is d1.d2d3… × 10^exponent.
fn shortest_digits(text: &str) -> (StackText, i32) {
    let (mantissa, exp10) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = int.bytes().chain(frac.bytes());
    let leading = int.bytes().chain(frac.bytes()).take_while(|b| *b == b'0').count();
    let mut digits = StackText::default();
    for b in all.skip(leading) {
        digits.push(b as char);
    }
    while digits.len() > 1 && digits.bytes[digits.len - 1] == b'0' {
        digits.len -= 1;
    }
    (digits, int.len() as i32 - 1 - leading as i32 + exp10)
}

/// A short text on the stack (a formatted double is at most 24 bytes).
struct StackText {
    bytes: [u8; 40],
    len: usize,
}

impl Default for StackText {
    fn default() -> StackText {
        StackText { bytes: [0; 40], len: 0 }
    }
}

impl StackText {
    fn as_str(&self) -> &str {
        // Only whole `&str`s and chars are written, so the bytes are UTF-8.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }

    fn len(&self) -> usize {
        self.len
    }

    fn push(&mut self, c: char) {
        let mut b = [0u8; 4];
        let _ = std::fmt::Write::write_str(self, c.encode_utf8(&mut b));
    }
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(std::fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Rust picks the upper of two equally near shortest digit strings; ECMAScript picks the even one. The two
/// differ only when the value lies exactly halfway between them, e.g. 1424953923781206.25, which Rust prints
/// as `…206.3` and ECMAScript as `…206.2`.
fn break_tie_to_even(f: f64, exponent: i32, digits: &mut String) {
    let Some(last) = digits.bytes().last() else {
        return;
    };
    if last % 2 == 0 || last == b'0' {
        return;
    }
    let mut lower = digits.clone();
    lower.pop();
    let midpoint_digits = format!("{lower}{}5", (last - 1) as char);
    lower.push((last - 1) as char);
    // The lower candidate must also read back as the same double…
    let lower_value = format!("{}.{}e{}", &lower[..1], &lower[1..], exponent).parse::<f64>();
    if lower_value != Ok(f) {
        return;
    }
    // …and the value must be exactly the midpoint: its exact decimal expansion (Rust formats with a precision
    // exactly, from the binary value) is the midpoint's digits followed only by zeros.
    let exact = format!("{:.60e}", f);
    let (exact_mantissa, _) = exact.split_once('e').unwrap_or((exact.as_str(), ""));
    let exact_digits: String = exact_mantissa.chars().filter(|c| *c != '.').collect();
    if exact_digits.starts_with(&midpoint_digits) && exact_digits[midpoint_digits.len()..].bytes().all(|b| b == b'0') {
        *digits = lower;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The digits and exponent Rust's `{:e}` gives, exact ties broken to even as ECMAScript does (Ryu does
    /// the same itself): the oracle the layout was first written against.
    fn digits_by_std(f: f64) -> (String, i32) {
        let sci = format!("{:e}", f);
        let (mantissa, exponent) = sci.split_once('e').expect("e");
        let exponent = exponent.parse().expect("exponent");
        let mut digits: String = mantissa.chars().filter(|c| *c != '.').collect();
        break_tie_to_even(f, exponent, &mut digits);
        (digits, exponent)
    }

    #[test]
    fn ryus_digits_are_the_shortest_round_trip_digits() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut checked = 0;
        while checked < 200_000 {
            // splitmix64 over all bit patterns, plus short decimals as requests carry them.
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let candidates = [f64::from_bits(z), (z % 2_000_001) as f64 / 1e8, (z % 1000) as f64 * 1e20];
            for f in candidates {
                if !f.is_finite() || f == 0.0 {
                    continue;
                }
                let f = f.abs();
                let mut buffer = ryu::Buffer::new();
                let (digits, exponent) = shortest_digits(buffer.format_finite(f));
                assert_eq!((digits.as_str().to_string(), exponent), digits_by_std(f), "{f:e}");
                checked += 1;
            }
        }
    }

    fn number(bits: u64) -> String {
        let mut s = String::new();
        write_number(f64::from_bits(bits), &mut s).expect("finite");
        s
    }

    /// The IEEE 754 → string table of RFC 8785 Appendix B.
    #[test]
    fn numbers_match_rfc8785_appendix_b() {
        let cases: &[(u64, &str)] = &[
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for (bits, expected) in cases {
            assert_eq!(number(*bits), *expected, "bits {bits:#018x}");
        }
        let mut s = String::new();
        assert_eq!(write_number(f64::NAN, &mut s), Err(JcsError::NonFiniteNumber));
        assert_eq!(write_number(f64::INFINITY, &mut s), Err(JcsError::NonFiniteNumber));
    }

    /// The example of RFC 8785 §3.2.2 / §3.2.3.
    #[test]
    fn canonicalizes_the_rfc8785_example() {
        let input = r#"{
            "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
            "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
            "literals": [null, true, false]
        }"#;
        let value: Value = serde_json::from_str(input).expect("valid JSON");
        let expected = "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}";
        assert_eq!(canonicalize(&value).expect("canonical"), expected);
    }

    /// The sorting example of RFC 8785 §3.2.3: keys sorted by UTF-16 code units, not by UTF-8 bytes.
    #[test]
    fn sorts_members_by_utf16_code_units() {
        let value = json!({
            "\u{20ac}": "Euro Sign",
            "\r": "Carriage Return",
            "\u{fb33}": "Hebrew Letter Dalet With Dagesh",
            "1": "One",
            "\u{1f600}": "Emoji: Grinning Face",
            "\u{0080}": "Control",
            "\u{00f6}": "Latin Small Letter O With Diaeresis"
        });
        let canonical = canonicalize(&value).expect("canonical");
        let order: Vec<&str> = [
            "Carriage Return",
            "One",
            "Control",
            "Latin Small Letter O With Diaeresis",
            "Euro Sign",
            "Emoji: Grinning Face",
            "Hebrew Letter Dalet With Dagesh",
        ]
        .to_vec();
        let mut last = 0;
        for name in order {
            let at = canonical.find(name).expect("present");
            assert!(at >= last, "{name} out of order in {canonical}");
            last = at;
        }
    }

    #[test]
    fn integers_are_numbers_like_any_other() {
        assert_eq!(canonicalize(&json!({"b": 100, "a": -7})).expect("ok"), r#"{"a":-7,"b":100}"#);
        assert_eq!(canonicalize(&json!([1e21, 1e-7, 123.0])).expect("ok"), "[1e+21,1e-7,123]");
    }
}
