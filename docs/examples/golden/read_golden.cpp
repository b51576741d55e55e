// Read a posenc-ref golden file from C++17 with nlohmann/json, exactly.
//
//   g++ -std=c++17 -O2 read_golden.cpp -o read_golden      # Debian: apt install nlohmann-json3-dev
//   ./read_golden posenc_ref_conformance/golden/vectors/<file>.json
//
// Float64 values are read from their hexadecimal form with std::strtod, which parses
// C99 hex floats exactly (the decimal form would also be exact with a correctly rounded
// strtod, which glibc's is).  Prints one line per array and the count of float64 values.
// Exported sets (posenc-ref golden export) may keep large arrays in .npy files beside the
// JSON ({"file": "arrays/NAME.npy", "sha256": ...}); read_npy reads them.  Verify the
// recorded SHA-256 with the hash library you already use (OpenSSL's SHA256, ...).
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// ordered_json keeps keys in file order (nlohmann::json sorts them), so walks match the file.
using json = nlohmann::ordered_json;

double parse_hex_float(const std::string& text) {
    errno = 0;
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);  // "0x1.921fb54442d18p+1" -> pi
    if (end == text.c_str() || *end != '\0' || errno == ERANGE) {
        throw std::runtime_error("not a hexadecimal float: " + text);
    }
    return value;
}

struct Array {
    std::string dtype;
    std::vector<std::int64_t> shape;
    std::vector<double> floats;          // dtype "float64"
    std::vector<std::int64_t> integers;  // dtype "int64" (and "bool" as 0/1)
};

// NumPy's .npy format 1.0: "\x93NUMPY", 1, 0, a little-endian uint16 header length, the
// header text {'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }, then the raw
// little-endian elements in C order.
void read_npy(const std::string& path, Array& out) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0 || bytes[6] != 1) {
        throw std::runtime_error(path + ": not a .npy file of format version 1");
    }
    const std::size_t length =
        static_cast<std::size_t>(static_cast<unsigned char>(bytes[8])) |
        static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    const std::string header = bytes.substr(10, length);
    std::string shape = "(";
    for (std::size_t i = 0; i < out.shape.size(); ++i) {
        const bool last = i + 1 == out.shape.size();
        shape += std::to_string(out.shape[i]) + (out.shape.size() == 1 ? "," : last ? "" : ", ");
    }
    shape += ")";
    const std::string descr = out.dtype == "float64" ? "'<f8'" : "'<i8'";
    if (header.find("'descr': " + descr) == std::string::npos ||
        header.find("'fortran_order': False") == std::string::npos ||
        header.find("'shape': " + shape) == std::string::npos) {
        throw std::runtime_error(path + ": header " + header + " does not match the reference");
    }
    std::size_t count = 1;
    for (auto n : out.shape) count *= static_cast<std::size_t>(n);
    if (bytes.size() != 10 + length + 8 * count) throw std::runtime_error(path + ": wrong size");
    for (std::size_t i = 0; i < count; ++i) {
        std::uint64_t bits = 0;  // assemble little-endian, whatever this machine's byte order
        const std::size_t at = 10 + length + 8 * i;
        for (int b = 7; b >= 0; --b) bits = bits << 8 | static_cast<unsigned char>(bytes[at + b]);
        if (out.dtype == "float64") {
            double v;
            std::memcpy(&v, &bits, sizeof v);
            out.floats.push_back(v);
        } else {
            out.integers.push_back(static_cast<std::int64_t>(bits));
        }
    }
}

Array decode(const json& node, const std::string& directory) {
    Array out;
    out.dtype = node.at("dtype").get<std::string>();
    out.shape = node.at("shape").get<std::vector<std::int64_t>>();
    if (node.contains("file")) {
        read_npy(directory + "/" + node.at("file").get<std::string>(), out);
    } else if (out.dtype == "float64") {
        for (const auto& h : node.at("hex")) out.floats.push_back(parse_hex_float(h.get<std::string>()));
    } else if (out.dtype == "int64") {
        out.integers = node.at("values").get<std::vector<std::int64_t>>();
    } else if (out.dtype == "bool") {
        for (const auto& b : node.at("values")) out.integers.push_back(b.get<bool>() ? 1 : 0);
    } else {
        throw std::runtime_error("unknown dtype " + out.dtype);
    }
    return out;
}

// Every encoded array is an object with "dtype" and "shape"; find them anywhere.
template <class F>
void walk(const json& node, const std::string& path, const std::string& directory, F&& visit) {
    if (node.is_object()) {
        if (node.contains("dtype") && node.contains("shape")) {
            visit(path, decode(node, directory));
            return;
        }
        for (auto it = node.begin(); it != node.end(); ++it) {
            walk(it.value(), path + "." + it.key(), directory, visit);
        }
    } else if (node.is_array()) {
        for (std::size_t i = 0; i < node.size(); ++i) {
            walk(node[i], path + "[" + std::to_string(i) + "]", directory, visit);
        }
    }
}

int main(int argc, char** argv) {
    for (int f = 1; f < argc; ++f) {
        std::ifstream in(argv[f], std::ios::binary);
        const json doc = json::parse(in);
        std::size_t floats = 0;
        std::uint64_t fold = 0;  // order-sensitive fold of the bit patterns, for CI
        const std::string file = argv[f];
        const auto slash = file.rfind('/');
        const std::string directory = slash == std::string::npos ? "." : file.substr(0, slash);
        walk(doc, "$", directory, [&](const std::string&, const Array& a) {
            for (double v : a.floats) {
                std::uint64_t bits;
                std::memcpy(&bits, &v, sizeof bits);
                fold = fold * 1099511628211ULL ^ bits;
                ++floats;
            }
        });
        std::cout << argv[f] << ": float64 values: " << floats << ", bits fold: " << std::hex << fold
                  << std::dec << "\n";
    }
    return 0;
}
