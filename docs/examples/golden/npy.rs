//! Reading the .npy files of an exported golden set (NumPy format 1.0) in Rust, std only.
//!
//! `posenc-ref golden export` keeps large arrays in `arrays/NAME.npy` beside the JSON,
//! referenced as {"dtype", "shape", "file", "format": "npy", "byteOrder": "little",
//! "sha256"}.  A file is a 10-byte preamble ("\x93NUMPY", 1, 0, the header length as a
//! little-endian u16), the header text `{'descr': '<f8', 'fortran_order': False,
//! 'shape': (2, 3), }` padded to 64 bytes, then the elements, little-endian, C order.
//! Check the recorded SHA-256 with the `sha2` crate before trusting the bytes.
//! Test it on its own: `rustc --edition 2021 --test npy.rs && ./npy`.

/// The elements of a binary golden array.
#[derive(Debug, PartialEq)]
pub enum NpyData {
    Float64(Vec<f64>),
    Int64(Vec<i64>),
}

/// The header's `shape` as NumPy writes it: `(3,)`, `(2, 3)`, `()`.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!("({})", shape.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

/// Parse `bytes` as the .npy file a reference {dtype, shape} describes.
pub fn parse_npy(bytes: &[u8], dtype: &str, shape: &[usize]) -> Result<NpyData, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" || bytes[6] != 1 {
        return Err("not a .npy file of format version 1".into());
    }
    let length = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(bytes.get(10..10 + length).ok_or("truncated header")?)
        .map_err(|_| "header is not text")?;
    let descr = match dtype {
        "float64" => "'<f8'",
        "int64" => "'<i8'",
        other => return Err(format!("unknown dtype {other:?}")),
    };
    let wanted = [
        format!("'descr': {descr}"),
        "'fortran_order': False".to_string(),
        format!("'shape': {}", shape_text(shape)),
    ];
    if let Some(missing) = wanted.iter().find(|w| !header.contains(w.as_str())) {
        return Err(format!("header {header:?} lacks {missing}"));
    }
    let count: usize = shape.iter().product();
    let data = &bytes[10 + length..];
    if data.len() != 8 * count {
        return Err(format!("{} data bytes for {count} elements", data.len()));
    }
    let words = data.chunks_exact(8).map(|c| <[u8; 8]>::try_from(c).unwrap());
    Ok(match dtype {
        "float64" => NpyData::Float64(words.map(f64::from_le_bytes).collect()),
        _ => NpyData::Int64(words.map(i64::from_le_bytes).collect()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes numpy.save writes (the header padded with spaces and a newline to 64 bytes).
    fn npy(descr: &str, shape: &str, payload: &[[u8; 8]]) -> Vec<u8> {
        let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        let padded = format!("{header:<width$}\n", width = (header.len() + 11 + 63) / 64 * 64 - 11);
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend((padded.len() as u16).to_le_bytes());
        bytes.extend(padded.as_bytes());
        payload.iter().for_each(|w| bytes.extend(w));
        bytes
    }

    #[test]
    fn reads_floats_and_ints() {
        let floats = npy("<f8", "(2,)", &[1.5f64.to_le_bytes(), (-2.0f64).to_le_bytes()]);
        assert_eq!(floats.len(), 128 + 16);
        assert_eq!(parse_npy(&floats, "float64", &[2]), Ok(NpyData::Float64(vec![1.5, -2.0])));
        let ints = npy("<i8", "(1, 2)", &[7i64.to_le_bytes(), (-1i64).to_le_bytes()]);
        assert_eq!(parse_npy(&ints, "int64", &[1, 2]), Ok(NpyData::Int64(vec![7, -1])));
    }

    #[test]
    fn refuses_what_the_reference_does_not_describe() {
        let floats = npy("<f8", "(2,)", &[1.5f64.to_le_bytes(), 0f64.to_le_bytes()]);
        assert!(parse_npy(&floats, "float64", &[3]).is_err());
        assert!(parse_npy(&floats, "int64", &[2]).is_err());
        assert!(parse_npy(&floats[..140], "float64", &[2]).is_err());
        assert!(parse_npy(b"not numpy", "float64", &[2]).is_err());
    }
}
