//! Exact parsing of C99 / Python hexadecimal floats ("0x1.921fb54442d18p+1") in Rust.
//!
//! Rust's `str::parse::<f64>` does not accept hex floats, so golden files are read with
//! this function (or from the decimal strings, see read_golden.rs for the caveat).
//! Test it on its own: `rustc --edition 2021 --test hexfloat.rs && ./hexfloat`.

/// The double named by `text`, or an error for anything that is not an exact hex float.
pub fn parse_hex_float(text: &str) -> Result<f64, String> {
    let err = || format!("not a hexadecimal float: {text:?}");
    let (negative, rest) = match text.trim().as_bytes().first() {
        Some(b'-') => (true, &text.trim()[1..]),
        Some(b'+') => (false, &text.trim()[1..]),
        _ => (false, text.trim()),
    };
    let rest = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")).ok_or_else(err)?;
    let (mantissa, exponent) = rest.split_once(['p', 'P']).ok_or_else(err)?;
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut exponent: i64 = exponent.parse().map_err(|_| err())?;
    exponent -= 4 * frac_part.len() as i64;
    // Exact integer significand; at most 53 significant bits can come from a double.
    let mut significand: u128 = 0;
    let digits = format!("{int_part}{frac_part}");
    if digits.is_empty() || digits.len() > 30 {
        return Err(err());
    }
    for c in digits.chars() {
        significand = significand * 16 + c.to_digit(16).ok_or_else(err)? as u128;
    }
    while significand != 0 && significand % 2 == 0 {
        significand /= 2;
        exponent += 1;
    }
    if significand >= 1u128 << 53 {
        return Err(format!("more than 53 significant bits: {text:?}"));
    }
    let mut value = significand as f64; // exact
    // Scale in steps that cannot overflow or underflow early (no ldexp in std).
    while exponent != 0 {
        let step = exponent.clamp(-1000, 1000);
        value *= 2f64.powi(step as i32);
        exponent -= step;
    }
    Ok(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::parse_hex_float;

    #[test]
    fn exact_values() {
        let cases: [(&str, f64); 8] = [
            ("0x1.921fb54442d18p+1", std::f64::consts::PI),
            ("0x1.999999999999ap-4", 0.1),
            ("0x1.0000000000000p+0", 1.0),
            ("0x0.0p+0", 0.0),
            ("0x0.0000000000001p-1022", f64::from_bits(1)), // smallest subnormal
            ("0x1.0000000000000p-1022", f64::MIN_POSITIVE),
            ("0x1.fffffffffffffp+1023", f64::MAX),
            ("0xc.90fdaa22168cp-2", std::f64::consts::PI), // C's %a may not normalise
        ];
        for (text, expected) in cases {
            assert_eq!(parse_hex_float(text).unwrap().to_bits(), expected.to_bits(), "{text}");
        }
        assert_eq!(parse_hex_float("-0x1.8p+1").unwrap(), -3.0);
        assert!(parse_hex_float("1.5").is_err());
        assert!(parse_hex_float("0x1.00000000000008p+0").is_err()); // 54 bits
    }
}
