//! Read a posenc-ref golden file from Rust with serde_json, exactly.
//!
//! Cargo.toml:
//!     [dependencies]
//!     serde_json = { version = "1", features = ["float_roundtrip"] }
//!
//! `float_roundtrip` matters only if you read the "decimal" numbers: without it,
//! serde_json's fast float parser may be off by one ulp.  The "hex" strings, parsed
//! with hexfloat.rs, are exact either way.  Arrays an exported set keeps in .npy files
//! ({"file": "arrays/NAME.npy", ...}) are read with npy.rs.
mod hexfloat;
mod npy;

use hexfloat::parse_hex_float;
use npy::{parse_npy, NpyData};
use serde_json::Value;
use std::path::Path;

/// An encoded array: {"dtype", "shape", "hex" | "values"}.
enum Array {
    Float64 { shape: Vec<usize>, data: Vec<f64> },
    Int64 { shape: Vec<usize>, data: Vec<i64> },
    Bool { shape: Vec<usize>, data: Vec<bool> },
}

fn decode(node: &Value, directory: &Path) -> Result<Array, String> {
    let shape: Vec<usize> = node["shape"]
        .as_array()
        .ok_or("shape must be an array")?
        .iter()
        .map(|n| n.as_u64().map(|n| n as usize).ok_or("shape entries must be integers"))
        .collect::<Result<_, _>>()?;
    if let Some(file) = node["file"].as_str() {
        let bytes = std::fs::read(directory.join(file)).map_err(|e| format!("{file}: {e}"))?;
        return match parse_npy(&bytes, node["dtype"].as_str().unwrap_or(""), &shape)? {
            NpyData::Float64(data) => Ok(Array::Float64 { shape, data }),
            NpyData::Int64(data) => Ok(Array::Int64 { shape, data }),
        };
    }
    match node["dtype"].as_str() {
        Some("float64") => {
            let data = node["hex"]
                .as_array()
                .ok_or("hex must be an array")?
                .iter()
                .map(|h| parse_hex_float(h.as_str().ok_or("hex entries must be strings")?))
                .collect::<Result<_, _>>()?;
            Ok(Array::Float64 { shape, data })
        }
        Some("int64") => Ok(Array::Int64 {
            shape,
            data: node["values"].as_array().ok_or("values")?.iter().filter_map(Value::as_i64).collect(),
        }),
        Some("bool") => Ok(Array::Bool {
            shape,
            data: node["values"].as_array().ok_or("values")?.iter().filter_map(Value::as_bool).collect(),
        }),
        other => Err(format!("unknown dtype {other:?}")),
    }
}

/// Every object with "dtype" and "shape" is an array, wherever it sits in the file.
fn walk(node: &Value, path: &str, dir: &Path, out: &mut Vec<(String, Array)>) -> Result<(), String> {
    match node {
        Value::Object(map) if map.contains_key("dtype") && map.contains_key("shape") => {
            out.push((path.to_owned(), decode(node, dir)?));
        }
        Value::Object(map) => {
            for (key, value) in map {
                walk(value, &format!("{path}.{key}"), dir, out)?;
            }
        }
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                walk(value, &format!("{path}[{i}]"), dir, out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for file in std::env::args().skip(1) {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file)?)?;
        let mut arrays = Vec::new();
        walk(&doc, "$", Path::new(&file).parent().unwrap_or(Path::new(".")), &mut arrays)?;
        let floats: usize = arrays
            .iter()
            .map(|(_, a)| match a {
                Array::Float64 { data, .. } => data.len(),
                _ => 0,
            })
            .sum();
        println!("{file}: {} arrays, {floats} float64 values", arrays.len());
    }
    Ok(())
}
