// UTF-8, one code point at a time: encoding (for NumPy unicode .npy files
// and UnicodeEncode) and decoding with the Unicode standard's rule for
// ill-formed input (each maximal subpart of an ill-formed sequence is one
// error, as ICU and TensorFlow's UnicodeDecode count them).
#ifndef GRAPHRUN_GRAPH_UTF8_H_
#define GRAPHRUN_GRAPH_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace graphrun {
namespace utf8 {

// Appends code point c (at most 0x10FFFF) as UTF-8.
inline void Append(uint32_t c, std::string* out) {
  if (c < 0x80) {
    out->push_back(static_cast<char>(c));
    return;
  }
  const int len = c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  static constexpr unsigned char kLead[] = {0, 0, 0xC0, 0xE0, 0xF0};
  out->push_back(static_cast<char>(kLead[len] | (c >> (6 * (len - 1)))));
  for (int i = len - 2; i >= 0; --i) {
    out->push_back(static_cast<char>(0x80 | ((c >> (6 * i)) & 0x3F)));
  }
}

// The code point at p[0, n) (n > 0) and how many bytes it took; for an
// ill-formed sequence, *cp = -1 and the length of its maximal subpart.
inline size_t Decode(const unsigned char* p, size_t n, int32_t* cp) {
  const unsigned char b = p[0];
  if (b < 0x80) {
    *cp = b;
    return 1;
  }
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3;
    if (b == 0xE0) lo = 0xA0;  // no overlong forms
    if (b == 0xED) hi = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;  // nothing past 0x10FFFF
  } else {
    *cp = -1;
    return 1;
  }
  int32_t v = b & (0xFF >> (len + 1));
  for (size_t i = 1; i < len; ++i) {
    const unsigned char first = i == 1 ? lo : 0x80, last = i == 1 ? hi : 0xBF;
    if (i >= n || p[i] < first || p[i] > last) {
      *cp = -1;
      return i;
    }
    v = (v << 6) | (p[i] & 0x3F);
  }
  *cp = v;
  return len;
}

}  // namespace utf8
}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_UTF8_H_
