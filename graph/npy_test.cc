#include "graph/npy.h"

#include "gtest/gtest.h"

namespace graphrun {
namespace {

// Builds a version-1 .npy file the way NumPy does.
std::string Npy(const std::string& dict, const std::string& body, int version = 1) {
  std::string header = dict;
  const size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(version));
  out.push_back('\0');
  const size_t n = header.size();
  out.push_back(static_cast<char>(n & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
  if (version > 1) {
    out.push_back(static_cast<char>((n >> 16) & 0xff));
    out.push_back(static_cast<char>((n >> 24) & 0xff));
  }
  return out + header + body;
}

std::string Bytes(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }

TEST(NpyTest, ReadsWhatNumPyWrites) {
  float v[] = {1.5f, -2.f, 3.f, 4.f, 5.f, 6.f};
  auto t = ParseNpy(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                        Bytes(v, sizeof(v))));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DT_FLOAT);
  EXPECT_EQ(t->shape(), TensorShape({2, 3}));
  EXPECT_EQ(t->flat<float>()[1], -2.f);

  int64_t s = 42;
  auto scalar = ParseNpy(Npy("{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
                             Bytes(&s, 8), 2));
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ(scalar->dims(), 0);
  EXPECT_EQ(scalar->scalar<int64_t>(), 42);

  auto empty = ParseNpy(Npy("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4), }", ""));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->NumElements(), 0);
}

// np.save(path, np.asfortranarray(a)) and saving a transposed array write
// the elements column-major with fortran_order True.
TEST(NpyTest, FortranOrderLoadsRowMajor) {
  // a = [[1, 2, 3], [4, 5, 6]] column-major: 1 4 2 5 3 6.
  const int32_t col[] = {1, 4, 2, 5, 3, 6};
  auto t = ParseNpy(Npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }",
                        Bytes(col, sizeof(col))));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->shape(), TensorShape({2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t->flat<int32_t>()[i], i + 1) << i;
  // Rank 3, [2, 2, 2] holding 0..7 row-major: column-major order below.
  const double col3[] = {0, 4, 2, 6, 1, 5, 3, 7};
  auto t3 = ParseNpy(Npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2, 2), }",
                         Bytes(col3, sizeof(col3))));
  ASSERT_TRUE(t3.ok()) << t3.status();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(t3->flat<double>()[i], i) << i;
  // Strings, and a vector (the same either way).
  auto s = ParseNpy(Npy("{'descr': '|S1', 'fortran_order': True, 'shape': (2, 2), }", "acbd"));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->flat<std::string>()[1], "b");
  EXPECT_EQ(s->flat<std::string>()[2], "c");
}

TEST(NpyTest, BigEndianBoolAndStrings) {
  const unsigned char be[] = {0x00, 0x00, 0x01, 0x02};  // 258 as >i4
  auto t = ParseNpy(Npy("{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }",
                        Bytes(be, 4)));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->flat<int32_t>()[0], 258);

  auto b = ParseNpy(Npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                        std::string("\x01\x00\x01", 3)));
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->flat<bool>()[2]);
  EXPECT_FALSE(b->flat<bool>()[1]);

  auto s = ParseNpy(Npy("{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }",
                        std::string("ab\0xyz", 6)));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->flat<std::string>()[0], "ab");
  EXPECT_EQ(s->flat<std::string>()[1], "xyz");

  // 'U2': UCS-4 little endian: "hé" and "z".
  const unsigned char u[] = {'h', 0, 0, 0, 0xe9, 0, 0, 0, 'z', 0, 0, 0, 0, 0, 0, 0};
  auto uni = ParseNpy(Npy("{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }",
                          Bytes(u, sizeof(u))));
  ASSERT_TRUE(uni.ok()) << uni.status();
  EXPECT_EQ(uni->flat<std::string>()[0], "h\xc3\xa9");
  EXPECT_EQ(uni->flat<std::string>()[1], "z");
}

TEST(NpyTest, StringsDropTrailingNulsOnly) {
  // np.array([b"a\0b", b"", b"xyz"]): '|S3', NULs inside kept.
  auto s = ParseNpy(Npy("{'descr': '|S3', 'fortran_order': False, 'shape': (3,), }",
                        std::string("a\0b\0\0\0xyz", 9)));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->flat<std::string>()[0], std::string("a\0b", 3));
  EXPECT_EQ(s->flat<std::string>()[1], "");
  EXPECT_EQ(s->flat<std::string>()[2], "xyz");

  // '>U3' (big-endian UTF-32): "\0é" -> NUL kept, "€" (U+20AC), "😀" (U+1F600).
  const unsigned char u[] = {0, 0, 0, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0,
                             0, 0, 0x20, 0xac, 0, 0, 0, 0, 0, 0, 0, 0,
                             0, 1, 0xf6, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  auto uni = ParseNpy(Npy("{'descr': '>U3', 'fortran_order': False, 'shape': (3,), }",
                          Bytes(u, sizeof(u))));
  ASSERT_TRUE(uni.ok()) << uni.status();
  EXPECT_EQ(uni->flat<std::string>()[0], std::string("\0\xc3\xa9", 3));
  EXPECT_EQ(uni->flat<std::string>()[1], "\xe2\x82\xac");
  EXPECT_EQ(uni->flat<std::string>()[2], "\xf0\x9f\x98\x80");

  const unsigned char bad[] = {0, 0, 0x11, 0};  // little-endian 0x110000
  auto no = ParseNpy(Npy("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }",
                         Bytes(bad, sizeof(bad))), "bad.npy");
  ASSERT_FALSE(no.ok());
  EXPECT_NE(no.status().message().find("bad.npy: element 0 holds 1114112, which is not a Unicode "
                                       "code point"),
            std::string::npos)
      << no.status();

  // Written back as 'S' of the longest element's width; UTF-8 bytes as they are.
  Tensor t = Tensor::FromVector<std::string>({"caf\xc3\xa9", "", std::string("a\0b", 3)},
                                             TensorShape({3, 1}));
  auto bytes = SerializeNpy(t);
  ASSERT_TRUE(bytes.ok());
  EXPECT_NE(bytes->find("{'descr': '|S5', 'fortran_order': False, 'shape': (3, 1), }"),
            std::string::npos);
  auto back = ParseNpy(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shape(), TensorShape({3, 1}));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(back->flat<std::string>()[i], t.flat<std::string>()[i]);
}

TEST(NpyTest, RoundTripEveryDtype) {
  for (DataType dt : {DT_BOOL, DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_INT32, DT_UINT32,
                      DT_INT64, DT_UINT64, DT_HALF, DT_FLOAT, DT_DOUBLE, DT_COMPLEX64,
                      DT_COMPLEX128}) {
    Tensor t(dt, TensorShape({3, 2}));
    auto* p = static_cast<uint8_t*>(t.raw_data());
    for (size_t i = 0; i < t.TotalBytes(); ++i) p[i] = dt == DT_BOOL ? i % 2 : static_cast<uint8_t>(i * 13 + 5);
    auto bytes = SerializeNpy(t);
    ASSERT_TRUE(bytes.ok()) << DataTypeString(dt);
    EXPECT_EQ((bytes->size() - t.TotalBytes()) % 64, 0u) << "data must start 64-aligned";
    auto back = ParseNpy(*bytes);
    ASSERT_TRUE(back.ok()) << DataTypeString(dt) << ": " << back.status();
    EXPECT_EQ(back->dtype(), dt);
    EXPECT_EQ(back->shape(), t.shape());
    EXPECT_EQ(Bytes(back->raw_data(), back->TotalBytes()), Bytes(t.raw_data(), t.TotalBytes()));
  }
  Tensor s(DT_STRING, TensorShape({2}));
  s.flat<std::string>()[0] = "graph";
  s.flat<std::string>()[1] = "run";
  auto back = ParseNpy(*SerializeNpy(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->flat<std::string>()[1], "run");
  // bfloat16 has no NumPy dtype: written as float32, exactly.
  Tensor bf(DT_BFLOAT16, TensorShape({1}));
  bf.flat<bfloat16>()[0] = bfloat16(1.5f);
  auto f = ParseNpy(*SerializeNpy(bf));
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->dtype(), DT_FLOAT);
  EXPECT_EQ(f->flat<float>()[0], 1.5f);
  // Header text as NumPy writes it.
  EXPECT_NE(SerializeNpy(Tensor(DT_FLOAT, TensorShape({5})))->find("'shape': (5,), }"), std::string::npos);
  EXPECT_NE(SerializeNpy(Tensor(DT_FLOAT, TensorShape({2, 3})))->find("'shape': (2, 3), }"), std::string::npos);
  EXPECT_NE(SerializeNpy(Tensor(DT_FLOAT, TensorShape()))->find("'shape': (), }"), std::string::npos);
}

TEST(NpyTest, BadFilesAreClearErrors) {
  auto expect = [](const std::string& data, const std::string& fragment) {
    auto t = ParseNpy(data, "x.npy");
    ASSERT_FALSE(t.ok()) << fragment;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find(fragment), std::string::npos) << t.status();
  };
  expect("PK\x03\x04 not npy", "x.npy is not a .npy file");
  float v[] = {1, 2, 3};
  expect(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", Bytes(v, 12)),
         "truncated: shape [4] needs 16 bytes of data, the file has 12");
  expect(Npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "xxxxxxxx"),
         "object arrays");
  expect(Npy("{'descr': '<f3', 'fortran_order': False, 'shape': (1,), }", "xxx"),
         "unsupported dtype '<f3'");
  expect(Npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "xxxx"),
         "structured dtypes are not supported");
  expect(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", ""),
         "bad shape dimension");
  expect(Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (100000000, 100000000, 1000000), }", ""),
         "too large");
  std::string good = Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", Bytes(v, 12));
  for (size_t cut = 0; cut < good.size(); ++cut) {
    EXPECT_FALSE(ParseNpy(good.substr(0, cut)).ok()) << cut;
  }
}

}  // namespace
}  // namespace graphrun
