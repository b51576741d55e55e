// Read a posenc-ref golden file from C++17 with nlohmann/json, exactly.
//
//   g++ -std=c++17 -O2 read_golden.cpp -o read_golden      # Debian: apt install nlohmann-json3-dev
//   ./read_golden posenc_ref_conformance/golden/vectors/<file>.json
//
// Float64 values are read from their hexadecimal form with std::strtod, which parses
// C99 hex floats exactly (the decimal form would also be exact with a correctly rounded
// strtod, which glibc's is).  Prints one line per array and the count of float64 values.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
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

Array decode(const json& node) {
    Array out;
    out.dtype = node.at("dtype").get<std::string>();
    out.shape = node.at("shape").get<std::vector<std::int64_t>>();
    if (out.dtype == "float64") {
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
void walk(const json& node, const std::string& path, F&& visit) {
    if (node.is_object()) {
        if (node.contains("dtype") && node.contains("shape")) {
            visit(path, decode(node));
            return;
        }
        for (auto it = node.begin(); it != node.end(); ++it) walk(it.value(), path + "." + it.key(), visit);
    } else if (node.is_array()) {
        for (std::size_t i = 0; i < node.size(); ++i) walk(node[i], path + "[" + std::to_string(i) + "]", visit);
    }
}

int main(int argc, char** argv) {
    for (int f = 1; f < argc; ++f) {
        std::ifstream in(argv[f], std::ios::binary);
        const json doc = json::parse(in);
        std::size_t floats = 0;
        std::uint64_t fold = 0;  // order-sensitive fold of the bit patterns, for CI
        walk(doc, "$", [&](const std::string&, const Array& a) {
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
