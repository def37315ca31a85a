#include "graph/npy.h"

#include <complex>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "graph/utf8.h"
#include "graph/graph_io.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

struct Descr {
  DataType dtype = DT_INVALID;
  bool swap = false;       // big-endian data
  bool is_bytes = false;   // 'S': fixed-width bytes
  bool is_unicode = false; // 'U': fixed-width UCS-4
  int64_t width = 0;       // item size in bytes
};

absl::StatusOr<Descr> ParseDescr(absl::string_view d, absl::string_view what) {
  Descr out;
  if (d.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": bad dtype '", d, "'"));
  }
  const char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    return absl::InvalidArgumentError(absl::StrCat(what, ": bad dtype '", d, "'"));
  }
  const char kind = d[1];
  int64_t size = 0;
  if (!absl::SimpleAtoi(d.substr(2), &size) || size <= 0 || size > (1 << 20)) {
    if (kind == 'O') {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": object arrays (dtype 'O') hold pickled Python objects and are "
                "not supported; save a numeric or bytes array"));
    }
    return absl::InvalidArgumentError(absl::StrCat(what, ": unsupported dtype '", d, "'"));
  }
  out.width = size;
  out.swap = order == '>' && size > 1;
  switch (kind) {
    case 'b':
      if (size == 1) out.dtype = DT_BOOL;
      break;
    case 'i':
      out.dtype = size == 1 ? DT_INT8 : size == 2 ? DT_INT16 : size == 4 ? DT_INT32
                : size == 8 ? DT_INT64 : DT_INVALID;
      break;
    case 'u':
      out.dtype = size == 1 ? DT_UINT8 : size == 2 ? DT_UINT16 : size == 4 ? DT_UINT32
                : size == 8 ? DT_UINT64 : DT_INVALID;
      break;
    case 'f':
      out.dtype = size == 2 ? DT_HALF : size == 4 ? DT_FLOAT : size == 8 ? DT_DOUBLE
                : DT_INVALID;
      break;
    case 'c':
      out.dtype = size == 8 ? DT_COMPLEX64 : size == 16 ? DT_COMPLEX128 : DT_INVALID;
      break;
    case 'S':
      out.dtype = DT_STRING;
      out.is_bytes = true;
      break;
    case 'U':
      out.dtype = DT_STRING;
      out.is_unicode = true;
      out.width = size * 4;
      break;
    default:
      break;
  }
  if (out.dtype == DT_INVALID) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": unsupported dtype '", d, "'"));
  }
  return out;
}

// Finds the value after 'key': in the header dict.
absl::StatusOr<absl::string_view> DictValue(absl::string_view header,
                                            absl::string_view key,
                                            absl::string_view what) {
  for (const char* q : {"'", "\""}) {
    std::string k = absl::StrCat(q, key, q);
    size_t pos = header.find(k);
    if (pos == absl::string_view::npos) continue;
    absl::string_view rest = header.substr(pos + k.size());
    rest = absl::StripLeadingAsciiWhitespace(rest);
    if (!absl::ConsumePrefix(&rest, ":")) break;
    return absl::StripLeadingAsciiWhitespace(rest);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": header has no '", key, "' entry"));
}

}  // namespace

std::string NpyDescr(DataType dtype) {
  switch (dtype) {
    case DT_BOOL: return "|b1";
    case DT_INT8: return "|i1";
    case DT_UINT8: return "|u1";
    case DT_INT16: return "<i2";
    case DT_UINT16: return "<u2";
    case DT_INT32: return "<i4";
    case DT_UINT32: return "<u4";
    case DT_INT64: return "<i8";
    case DT_UINT64: return "<u8";
    case DT_HALF: return "<f2";
    case DT_FLOAT: return "<f4";
    case DT_DOUBLE: return "<f8";
    case DT_COMPLEX64: return "<c8";
    case DT_COMPLEX128: return "<c16";
    default: return "";
  }
}

namespace {

// `col` holds its elements in Fortran (column-major) order, as NumPy saves
// a transposed or np.asfortranarray array: the same tensor in row-major
// order.
template <typename T>
void ColumnToRowMajor(const T* src, const TensorShape& shape, T* dst) {
  const int rank = shape.dims();
  std::vector<int64_t> stride(rank, 1);  // column-major strides
  for (int d = 1; d < rank; ++d) stride[d] = stride[d - 1] * shape.dim_size(d - 1);
  std::vector<int64_t> index(rank, 0);
  for (int64_t i = 0, n = shape.num_elements(); i < n; ++i) {
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) offset += index[d] * stride[d];
    dst[i] = src[offset];
    for (int d = rank - 1; d >= 0; --d) {  // next row-major index
      if (++index[d] < shape.dim_size(d)) break;
      index[d] = 0;
    }
  }
}

Tensor FromFortranOrder(const Tensor& col) {
  if (col.dims() < 2) return col;
  Tensor row(col.dtype(), col.shape());
  if (col.dtype() == DT_STRING) {
    ColumnToRowMajor(col.flat<std::string>().data(), col.shape(), row.flat<std::string>().data());
    return row;
  }
  const auto* src = static_cast<const char*>(col.raw_data());
  auto* dst = static_cast<char*>(row.raw_data());
  switch (DataTypeSize(col.dtype())) {
    case 1: ColumnToRowMajor(reinterpret_cast<const uint8_t*>(src), col.shape(),
                             reinterpret_cast<uint8_t*>(dst)); break;
    case 2: ColumnToRowMajor(reinterpret_cast<const uint16_t*>(src), col.shape(),
                             reinterpret_cast<uint16_t*>(dst)); break;
    case 4: ColumnToRowMajor(reinterpret_cast<const uint32_t*>(src), col.shape(),
                             reinterpret_cast<uint32_t*>(dst)); break;
    case 8: ColumnToRowMajor(reinterpret_cast<const uint64_t*>(src), col.shape(),
                             reinterpret_cast<uint64_t*>(dst)); break;
    default: ColumnToRowMajor(reinterpret_cast<const std::complex<double>*>(src), col.shape(),
                              reinterpret_cast<std::complex<double>*>(dst)); break;
  }
  return row;
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(absl::string_view data, absl::string_view what) {
  if (data.size() < kMagicLen + 4 || data.substr(0, kMagicLen) != absl::string_view(kMagic, kMagicLen)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is not a .npy file (no \\x93NUMPY magic)"));
  }
  const uint8_t major = static_cast<uint8_t>(data[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(data[8]) | (static_cast<uint8_t>(data[9]) << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": truncated header"));
    }
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<uint8_t>(data[8 + i]);
    offset = 12;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": unsupported .npy format version ", major));
  }
  if (data.size() < offset + header_len) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": truncated header"));
  }
  absl::string_view header = data.substr(offset, header_len);
  absl::string_view body = data.substr(offset + header_len);

  GR_ASSIGN_OR_RETURN(absl::string_view dv, DictValue(header, "descr", what));
  if (dv.empty() || (dv[0] != '\'' && dv[0] != '"')) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": structured dtypes are not supported (descr ", dv.substr(0, 40), ")"));
  }
  const char quote = dv[0];
  const size_t end = dv.find(quote, 1);
  if (end == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": bad header"));
  }
  GR_ASSIGN_OR_RETURN(Descr descr, ParseDescr(dv.substr(1, end - 1), what));

  GR_ASSIGN_OR_RETURN(absl::string_view fv, DictValue(header, "fortran_order", what));
  const bool fortran = absl::StartsWith(fv, "True");
  if (!fortran && !absl::StartsWith(fv, "False")) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": bad fortran_order"));
  }
  GR_ASSIGN_OR_RETURN(absl::string_view sv, DictValue(header, "shape", what));
  if (!absl::ConsumePrefix(&sv, "(")) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": bad shape"));
  }
  const size_t close = sv.find(')');
  if (close == absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": bad shape"));
  }
  std::vector<int64_t> dims;
  for (absl::string_view part : absl::StrSplit(sv.substr(0, close), ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) continue;
    absl::ConsumeSuffix(&part, "L");
    int64_t d = 0;
    if (!absl::SimpleAtoi(part, &d) || d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": bad shape dimension '", part, "'"));
    }
    dims.push_back(d);
  }
  auto shape = TensorShape::FromDims(dims);
  if (!shape.ok()) return WithContext(shape.status(), what);
  const int64_t n = shape->num_elements();
  const double need = static_cast<double>(n) * static_cast<double>(descr.width);
  if (static_cast<double>(body.size()) < need) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": truncated: shape ", shape->DebugString(), " needs ",
        static_cast<int64_t>(need), " bytes of data, the file has ", body.size()));
  }
  GR_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(HostAllocator(), descr.dtype, *shape));
  if (descr.dtype == DT_STRING) {
    auto out = t.flat<std::string>();
    for (int64_t i = 0; i < n; ++i) {
      absl::string_view item = body.substr(i * descr.width, descr.width);
      // NumPy pads with NULs and drops trailing ones on reading; NULs
      // inside an element are data.
      if (descr.is_bytes) {
        const size_t len = item.find_last_not_of('\0');
        out[i] = std::string(item.substr(0, len == absl::string_view::npos ? 0 : len + 1));
      } else {
        std::vector<uint32_t> code_points;
        for (int64_t k = 0; k + 4 <= descr.width; k += 4) {
          uint32_t c = 0;
          for (int b = 0; b < 4; ++b) {
            const int idx = descr.swap ? k + b : k + 3 - b;
            c = c << 8 | static_cast<uint8_t>(item[idx]);
          }
          if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
            return absl::InvalidArgumentError(absl::StrCat(
                what, ": element ", i, " holds ", c, ", which is not a Unicode code point"));
          }
          code_points.push_back(c);
        }
        while (!code_points.empty() && code_points.back() == 0) code_points.pop_back();
        std::string s;
        for (uint32_t c : code_points) utf8::Append(c, &s);
        out[i] = std::move(s);
      }
    }
    return fortran ? FromFortranOrder(t) : t;
  }
  auto* dst = static_cast<char*>(t.raw_data());
  std::memcpy(dst, body.data(), t.TotalBytes());
  if (descr.swap) {
    // Complex numbers swap each component.
    const int unit = IsComplexType(descr.dtype) ? static_cast<int>(descr.width / 2)
                                                : static_cast<int>(descr.width);
    for (size_t i = 0; i < t.TotalBytes(); i += unit) std::reverse(dst + i, dst + i + unit);
  }
  if (descr.dtype == DT_BOOL) {
    for (int64_t i = 0; i < n; ++i) dst[i] = dst[i] != 0;
  }
  return fortran ? FromFortranOrder(t) : t;
}

absl::StatusOr<Tensor> ReadNpyFile(const std::string& path) {
  GR_ASSIGN_OR_RETURN(std::string data, ReadFileToString(path));
  return ParseNpy(data, path);
}

absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor) {
  Tensor t = tensor;
  if (t.dtype() == DT_BFLOAT16) {
    Tensor f(DT_FLOAT, t.shape());
    auto src = t.flat<bfloat16>();
    auto dst = f.flat<float>();
    for (int64_t i = 0; i < t.NumElements(); ++i) dst[i] = static_cast<float>(src[i]);
    t = f;
  }
  std::string descr = NpyDescr(t.dtype());
  int64_t width = 0;
  if (t.dtype() == DT_STRING) {
    for (const std::string& s : t.flat<std::string>()) {
      width = std::max<int64_t>(width, static_cast<int64_t>(s.size()));
    }
    width = std::max<int64_t>(width, 1);
    descr = absl::StrCat("|S", width);
  }
  if (descr.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a ", DataTypeString(t.dtype()), " tensor has no NumPy dtype"));
  }
  std::string shape = "(";
  for (int i = 0; i < t.dims(); ++i) absl::StrAppend(&shape, t.dim_size(i), ",", i + 1 < t.dims() ? " " : "");
  if (t.dims() > 1) shape.pop_back();  // numpy writes "(2, 3)" but "(5,)"
  shape += ")";
  std::string header = absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ",
                                    shape, ", }");
  // Pad so the data starts at a multiple of 64 bytes; header ends in '\n'.
  const size_t unpadded = kMagicLen + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string out(kMagic, kMagicLen);
  out.push_back('\x01');
  out.push_back('\x00');
  if (header.size() > 65535) return absl::InvalidArgumentError("npy header too long");
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  if (t.dtype() == DT_STRING) {
    for (const std::string& s : t.flat<std::string>()) {
      out += s;
      out.append(width - s.size(), '\0');
    }
  } else {
    out.append(static_cast<const char*>(t.raw_data()), t.TotalBytes());
  }
  return out;
}

absl::Status WriteNpyFile(const std::string& path, const Tensor& tensor) {
  GR_ASSIGN_OR_RETURN(std::string data, SerializeNpy(tensor));
  return WriteFileAtomically(path, data);
}

}  // namespace graphrun
