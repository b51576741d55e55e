// Read a posenc-ref golden file with nothing but JSON.parse, exactly.
//
//   node read_golden.mjs posenc_ref_conformance/golden/vectors/<file>.json
//
// Prints the file's checksum status, then one line per float64 array found, and a
// fingerprint of every float64 value's bit pattern (used by CI to compare readers).
// Exported sets (posenc-ref golden export) may keep large arrays in .npy files beside
// the JSON; readNpy below reads them (NumPy's format 1.0, a 10-byte preamble, a text
// header, then the raw little-endian elements).
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";

// Parse a C99 / Python hexadecimal float ("0x1.921fb54442d18p+1", "-0x0.0p+0",
// "0x1p-1074") to the exact double it names.  JavaScript's Number() and parseFloat()
// do not accept this syntax, and parsing the decimal digits instead is only exact if
// the parser rounds correctly (JSON.parse does; not every hand-written one does).
export function parseHexFloat(text) {
  const m = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)$/.exec(text.trim());
  if (m === null || (m[2] + (m[3] ?? "")).length === 0) {
    throw new SyntaxError(`not a hexadecimal float: ${JSON.stringify(text)}`);
  }
  const digits = (m[2] + (m[3] ?? "")).replace(/^0+/, "") || "0";
  // Exact integer significand: BigInt has no size limit.
  let significand = BigInt("0x" + digits);
  let exponent = Number(m[4]) - 4 * (m[3] ?? "").length;
  // Keep at most 53 significant bits; a longer significand cannot come from a double
  // (Python's float.hex writes 1 + 13 hex digits), so refuse rather than round.
  while (significand > 0n && (significand & 1n) === 0n) { significand >>= 1n; exponent += 1; }
  if (significand >= 1n << 53n) throw new RangeError(`more than 53 significant bits: ${text}`);
  let value = Number(significand); // exact: < 2**53
  // Scale by 2**exponent in steps that cannot overflow or underflow early; only the
  // last step can land in the subnormal range, where the product is still exact.
  while (exponent > 0) { const s = Math.min(exponent, 1000); value *= 2 ** s; exponent -= s; }
  while (exponent < 0) { const s = Math.max(exponent, -1000); value *= 2 ** s; exponent -= s; }
  return m[1] === "-" ? -value : value;
}

// checksum.value is the SHA-256 of the file with its own 64 hex digits replaced by "0".
export function checksumOk(bytes, doc) {
  const expected = doc?.checksum?.value;
  if (typeof expected !== "string") return null;
  const text = bytes.toString("latin1");
  const blank = text.replace(expected, "0".repeat(64));
  return createHash("sha256").update(Buffer.from(blank, "latin1")).digest("hex") === expected;
}

// Every encoded array is an object {dtype, shape, hex|values}; find them anywhere.
export function* arrays(node, path = "$") {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) yield* arrays(node[i], `${path}[${i}]`);
  } else if (node !== null && typeof node === "object") {
    if (typeof node.dtype === "string" && Array.isArray(node.shape)) {
      yield [path, node];
      return;
    }
    for (const [key, value] of Object.entries(node)) yield* arrays(value, `${path}.${key}`);
  }
}

// A binary array {dtype, shape, file, format: "npy", byteOrder: "little", sha256}: check the
// file's SHA-256 and its header (descr '<f8' or '<i8', C order, the same shape), then read
// the elements little-endian whatever the machine's byte order.
export function readNpy(bytes, array) {
  if (createHash("sha256").update(bytes).digest("hex") !== array.sha256) {
    throw new Error(`${array.file}: SHA-256 differs from the one recorded`);
  }
  if (bytes[0] !== 0x93 || bytes.toString("latin1", 1, 6) !== "NUMPY" || bytes[6] !== 1) {
    throw new Error(`${array.file}: not a .npy file of format version 1`);
  }
  const length = bytes.readUInt16LE(8);
  const header = bytes.toString("latin1", 10, 10 + length);
  const descr = /'descr': '([^']*)'/.exec(header)?.[1];
  const dims = /'shape': \(([^)]*)\)/.exec(header)?.[1] ?? "";
  const shape = dims.split(",").filter((s) => s.trim()).map(Number);
  const want = array.dtype === "float64" ? "<f8" : "<i8";
  if (descr !== want || !/'fortran_order': False/.test(header) || shape.join() !== array.shape.join()) {
    throw new Error(`${array.file}: header ${header.trim()} does not match ${want} [${array.shape}]`);
  }
  const count = shape.reduce((a, b) => a * b, 1);
  const view = new DataView(bytes.buffer, bytes.byteOffset + 10 + length, 8 * count);
  return array.dtype === "float64"
    ? Float64Array.from({ length: count }, (_, i) => view.getFloat64(8 * i, true))
    : BigInt64Array.from({ length: count }, (_, i) => view.getBigInt64(8 * i, true));
}

export function decode(array, directory = ".") {
  if (typeof array.file === "string") return readNpy(readFileSync(join(directory, array.file)), array);
  if (array.dtype === "float64") return Float64Array.from(array.hex, parseHexFloat);
  if (array.dtype === "int64") return BigInt64Array.from(array.values, (v) => BigInt(v));
  if (array.dtype === "bool") return array.values.map(Boolean);
  throw new TypeError(`unknown dtype ${array.dtype}`);
}

function main(file) {
  const bytes = readFileSync(file);
  const doc = JSON.parse(bytes.toString("utf8"));
  const ok = checksumOk(bytes, doc);
  console.log(`${file}: checksum ${ok === null ? "none" : ok ? "ok" : "MISMATCH"}`);
  const fingerprint = createHash("sha256");
  let floats = 0;
  for (const [path, array] of arrays(doc)) {
    const values = decode(array, dirname(file));
    if (array.dtype === "float64") {
      // The decimal strings must name the same doubles (JSON.parse rounds correctly).
      (array.decimal ?? []).forEach((d, i) => {
        if (d !== values[i]) throw new Error(`${path}[${i}]: hex ${array.hex[i]} != decimal ${d}`);
      });
      fingerprint.update(Buffer.from(values.buffer));
      floats += values.length;
    }
  }
  console.log(`float64 values: ${floats}, bits sha256: ${fingerprint.digest("hex")}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of process.argv.slice(2)) main(file);
}
