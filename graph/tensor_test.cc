#include "graph/tensor.h"

#include <limits>
#include <string>

#include "gtest/gtest.h"
#include "graph/types.h"

namespace graphrun {
namespace {

TensorProto ProtoOf(DataType dtype, std::initializer_list<int64_t> dims) {
  TensorProto p;
  p.set_dtype(dtype);
  for (int64_t d : dims) p.mutable_tensor_shape()->add_dim()->set_size(d);
  return p;
}

TEST(TensorTest, FillRuleRepeatsLastValue) {
  TensorProto p = ProtoOf(DT_FLOAT, {2, 3});
  p.add_float_val(1.5f);
  p.add_float_val(2.5f);
  auto t = Tensor::FromProto(p);
  ASSERT_TRUE(t.ok()) << t.status();
  std::vector<float> got(t->flat<float>().begin(), t->flat<float>().end());
  EXPECT_EQ(got, (std::vector<float>{1.5f, 2.5f, 2.5f, 2.5f, 2.5f, 2.5f}));
}

TEST(TensorTest, FillRuleEmptyFieldGivesZeros) {
  TensorProto p = ProtoOf(DT_INT64, {4});
  auto t = Tensor::FromProto(p);
  ASSERT_TRUE(t.ok());
  for (int64_t v : t->flat<int64_t>()) EXPECT_EQ(v, 0);
}

TEST(TensorTest, FillRuleIgnoresExtraValues) {
  TensorProto p = ProtoOf(DT_INT32, {2});
  for (int v : {7, 8, 9}) p.add_int_val(v);
  auto t = Tensor::FromProto(p);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->flat<int32_t>()[0], 7);
  EXPECT_EQ(t->flat<int32_t>()[1], 8);
}

TEST(TensorTest, EveryTypedFieldDecodes) {
  {
    TensorProto p = ProtoOf(DT_DOUBLE, {2});
    p.add_double_val(0.25);
    auto t = Tensor::FromProto(p);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->flat<double>()[1], 0.25);
  }
  for (DataType dt : {DT_INT8, DT_INT16, DT_UINT8, DT_UINT16}) {
    TensorProto p = ProtoOf(dt, {3});
    p.add_int_val(-1);
    p.add_int_val(100);
    auto t = Tensor::FromProto(p);
    ASSERT_TRUE(t.ok()) << DataTypeString(dt);
    EXPECT_EQ(t->ValueString(1), "100") << DataTypeString(dt);
    EXPECT_EQ(t->ValueString(2), "100") << DataTypeString(dt);
  }
  {
    TensorProto p = ProtoOf(DT_INT8, {1});
    p.add_int_val(-1);
    EXPECT_EQ(Tensor::FromProto(p)->flat<int8_t>()[0], -1);
    p.set_dtype(DT_UINT8);
    EXPECT_EQ(Tensor::FromProto(p)->flat<uint8_t>()[0], 255);
  }
  {
    TensorProto p = ProtoOf(DT_UINT32, {2});
    p.add_uint32_val(4000000000u);
    EXPECT_EQ(Tensor::FromProto(p)->flat<uint32_t>()[1], 4000000000u);
    TensorProto q = ProtoOf(DT_UINT64, {1});
    q.add_uint64_val(std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(Tensor::FromProto(q)->flat<uint64_t>()[0],
              std::numeric_limits<uint64_t>::max());
  }
  {
    TensorProto p = ProtoOf(DT_BOOL, {3});
    p.add_bool_val(false);
    p.add_bool_val(true);
    auto t = Tensor::FromProto(p);
    EXPECT_FALSE(t->flat<bool>()[0]);
    EXPECT_TRUE(t->flat<bool>()[2]);
  }
  {
    TensorProto p = ProtoOf(DT_HALF, {2});
    p.add_half_val(0x3C00);  // 1.0 in IEEE half
    auto t = Tensor::FromProto(p);
    EXPECT_EQ(static_cast<float>(t->flat<half>()[1]), 1.0f);
    p.set_dtype(DT_BFLOAT16);
    p.set_half_val(0, 0x4040);  // 3.0 in bfloat16
    EXPECT_EQ(static_cast<float>(Tensor::FromProto(p)->flat<bfloat16>()[0]), 3.0f);
  }
  {
    TensorProto p = ProtoOf(DT_STRING, {3});
    p.add_string_val("a");
    p.add_string_val(std::string("b\0c", 3));
    auto t = Tensor::FromProto(p);
    EXPECT_EQ(t->flat<std::string>()[0], "a");
    EXPECT_EQ(t->flat<std::string>()[2], std::string("b\0c", 3));
  }
  {
    TensorProto p = ProtoOf(DT_COMPLEX64, {2});
    p.add_scomplex_val(1);
    p.add_scomplex_val(-2);
    auto t = Tensor::FromProto(p);
    EXPECT_EQ(t->flat<complex64>()[1], complex64(1, -2));
    TensorProto q = ProtoOf(DT_COMPLEX128, {1});
    q.add_dcomplex_val(3);
    q.add_dcomplex_val(4);
    EXPECT_EQ(Tensor::FromProto(q)->flat<complex128>()[0], complex128(3, 4));
    q.add_dcomplex_val(5);
    EXPECT_FALSE(Tensor::FromProto(q).ok());  // odd count
  }
}

TEST(TensorTest, TensorContentRoundTripForEveryType) {
  for (DataType dt : {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8,
                      DT_INT64, DT_BOOL, DT_UINT16, DT_HALF, DT_BFLOAT16,
                      DT_UINT32, DT_UINT64, DT_COMPLEX64, DT_COMPLEX128}) {
    Tensor t(dt, TensorShape({2, 3}));
    auto* bytes = static_cast<uint8_t*>(t.raw_data());
    for (size_t i = 0; i < t.TotalBytes(); ++i) {
      bytes[i] = static_cast<uint8_t>(dt == DT_BOOL ? i % 2 : i * 7 + 1);
    }
    TensorProto content;
    t.AsProtoTensorContent(&content);
    auto back = Tensor::FromProto(content);
    ASSERT_TRUE(back.ok()) << DataTypeString(dt) << ": " << back.status();
    EXPECT_EQ(std::string(static_cast<char*>(back->raw_data()), back->TotalBytes()),
              std::string(static_cast<char*>(t.raw_data()), t.TotalBytes()))
        << DataTypeString(dt);
    TensorProto field;
    t.AsProtoField(&field);
    EXPECT_TRUE(field.tensor_content().empty());
    auto back2 = Tensor::FromProto(field);
    ASSERT_TRUE(back2.ok()) << DataTypeString(dt);
    EXPECT_EQ(back2->DebugString(100), t.DebugString(100)) << DataTypeString(dt);
  }
}

TEST(TensorTest, StringTensorContentUsesVarintLengths) {
  Tensor t(DT_STRING, TensorShape({2}));
  t.flat<std::string>()[0] = "hello";
  t.flat<std::string>()[1] = std::string(300, 'x');
  TensorProto p;
  t.AsProtoTensorContent(&p);
  // Lengths first (5 -> one byte, 300 -> two bytes), then the bytes.
  ASSERT_EQ(p.tensor_content().size(), 1 + 2 + 5 + 300);
  EXPECT_EQ(p.tensor_content()[0], 5);
  auto back = Tensor::FromProto(p);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->flat<std::string>()[1], std::string(300, 'x'));
  p.mutable_tensor_content()->resize(20);
  EXPECT_FALSE(Tensor::FromProto(p).ok());
}

TEST(TensorTest, BadProtosAreErrors) {
  TensorProto p = ProtoOf(DT_FLOAT, {2, 2});
  p.set_tensor_content(std::string(15, '\0'));
  auto s = Tensor::FromProto(p).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("15 bytes"), std::string::npos) << s;

  TensorProto huge = ProtoOf(DT_FLOAT, {1000000, 1000000});
  huge.add_float_val(1);
  s = Tensor::FromProto(huge).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("over the limit"), std::string::npos) << s;

  TensorProto overflow = ProtoOf(DT_FLOAT, {int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_FALSE(Tensor::FromProto(overflow).ok());

  TensorProto neg = ProtoOf(DT_FLOAT, {-1});
  EXPECT_FALSE(Tensor::FromProto(neg).ok());

  TensorProto bad_type = ProtoOf(DT_RESOURCE, {1});
  EXPECT_FALSE(Tensor::FromProto(bad_type).ok());

  TensorProto unknown_rank;
  unknown_rank.set_dtype(DT_FLOAT);
  unknown_rank.mutable_tensor_shape()->set_unknown_rank(true);
  EXPECT_FALSE(Tensor::FromProto(unknown_rank).ok());
}

TEST(TensorTest, CopiesShareAndSlicesDoNotCopy) {
  Tensor t = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2}));
  Tensor copy = t;
  EXPECT_TRUE(copy.SharesBufferWith(t));
  Tensor rows = t.Slice(1, 3);
  EXPECT_TRUE(rows.SharesBufferWith(t));
  EXPECT_EQ(rows.shape(), TensorShape({2, 2}));
  EXPECT_EQ(rows.flat<float>()[0], 3);
  EXPECT_EQ(rows.raw_data(), static_cast<char*>(t.raw_data()) + 2 * sizeof(float));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment, 0u);
  auto r = t.Reshaped(TensorShape({6}));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->SharesBufferWith(t));
  EXPECT_FALSE(t.Reshaped(TensorShape({4})).ok());
}

TEST(TensorTest, WrappedHostMemoryIsUsedInPlaceAndReleasedOnce) {
  alignas(kTensorAlignment) float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int released = 0;
  {
    absl::StatusOr<Tensor> t = Tensor::WrapHostMemory(DT_FLOAT, TensorShape({2, 4}), data,
                                                      [&released] { ++released; });
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->raw_data(), data);
    EXPECT_EQ(t->flat<float>()[5], 6.0f);
    Tensor row = t->Slice(1, 2);
    Tensor copy = *t;
    t->flat<float>()[4] = -1;
    EXPECT_EQ(data[4], -1.0f);  // the caller's memory, not a copy
    EXPECT_EQ(row.flat<float>()[0], -1.0f);
    *t = Tensor();
    copy = Tensor();
    EXPECT_EQ(released, 0);  // `row` still views it
  }
  EXPECT_EQ(released, 1);
  // Misaligned memory and element types with C++ objects are refused, and
  // the release is not run for a tensor never made.
  auto misaligned = Tensor::WrapHostMemory(DT_FLOAT, TensorShape({2}), &data[1],
                                           [&released] { ++released; });
  EXPECT_EQ(misaligned.status().code(), absl::StatusCode::kInvalidArgument);
  auto strings = Tensor::WrapHostMemory(DT_STRING, TensorShape({1}), data,
                                        [&released] { ++released; });
  EXPECT_EQ(strings.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(released, 1);
}

TEST(TensorTest, EmptyAndScalar) {
  Tensor empty(DT_FLOAT, TensorShape({0, 5}));
  EXPECT_EQ(empty.NumElements(), 0);
  TensorProto p;
  empty.AsProtoTensorContent(&p);
  EXPECT_TRUE(Tensor::FromProto(p).ok());
  Tensor s = Tensor::Scalar<int64_t>(42);
  EXPECT_EQ(s.dims(), 0);
  EXPECT_EQ(s.scalar<int64_t>(), 42);
  EXPECT_EQ(s.DebugString(), "Tensor<type: int64 shape: [] values: 42>");
}

TEST(TypesTest, NamesAndRefs) {
  EXPECT_EQ(DataTypeString(DT_FLOAT), "float");
  EXPECT_EQ(DataTypeString(DT_HALF_REF), "half_ref");
  EXPECT_EQ(DataTypeString(DT_BFLOAT16), "bfloat16");
  EXPECT_EQ(*DataTypeFromString("int64"), DT_INT64);
  EXPECT_EQ(*DataTypeFromString("DT_FLOAT_REF"), DT_FLOAT_REF);
  EXPECT_FALSE(DataTypeFromString("floaty").ok());
  EXPECT_TRUE(IsRefType(DT_UINT64_REF));
  EXPECT_EQ(BaseType(DT_INT32_REF), DT_INT32);
  EXPECT_EQ(MakeRefType(DT_STRING), DT_STRING_REF);
  EXPECT_EQ(static_cast<int>(DT_UINT64_REF), 123);
  EXPECT_EQ(static_cast<int>(DT_HALF), 19);
  EXPECT_EQ(DataTypeSize(DT_BFLOAT16), 2);
  EXPECT_EQ(DataTypeSize(DT_COMPLEX128), 16);
  EXPECT_TRUE(IsValidDataType(33));
  EXPECT_FALSE(IsValidDataType(34));
  EXPECT_FALSE(IsValidDataType(99));
  // Open proto3 enums: out-of-range values must not be taken for refs.
  EXPECT_FALSE(IsRefType(static_cast<DataType>(300)));
  EXPECT_EQ(BaseType(static_cast<DataType>(300)), static_cast<DataType>(300));
  EXPECT_EQ(DataTypeString(static_cast<DataType>(300)), "unknown(300)");
}

TEST(TensorShapeTest, PartialShapes) {
  TensorShapeProto p;
  p.add_dim()->set_size(-1);
  p.add_dim()->set_size(3);
  auto s = PartialShape::FromProto(p);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->DebugString(), "[?,3]");
  EXPECT_FALSE(s->IsFullyDefined());
  EXPECT_TRUE(s->IsCompatibleWith(TensorShape({7, 3})));
  EXPECT_FALSE(s->IsCompatibleWith(TensorShape({7, 4})));
  EXPECT_FALSE(TensorShape::FromProto(p).ok());
  TensorShapeProto unknown;
  unknown.set_unknown_rank(true);
  EXPECT_TRUE(PartialShape::FromProto(unknown)->unknown_rank());
  unknown.add_dim()->set_size(1);
  EXPECT_FALSE(PartialShape::FromProto(unknown).ok());
  EXPECT_EQ(PartialShape::FromProto(s->AsProto())->DebugString(), "[?,3]");
  EXPECT_FALSE(TensorShape::FromDims({int64_t{1} << 30, int64_t{1} << 30}).ok());
}

constexpr int64_t k2to48 = int64_t{1} << 48;

TEST(TensorShapeTest, FromDimsKeepsNonZeroProductInRange) {
  EXPECT_EQ(TensorShape::FromDims({k2to48})->num_elements(), k2to48);
  EXPECT_EQ(TensorShape::FromDims({0, k2to48})->num_elements(), 0);
  absl::Status s = TensorShape::FromDims({k2to48 + 1}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "shape [281474976710657] is too large (more than 2^48 elements)");
  // A 0 dim does not excuse the rest: removing it, or any stride computed
  // over the other dims, would overflow.
  EXPECT_FALSE(TensorShape::FromDims({0, int64_t{1} << 40, int64_t{1} << 40}).ok());
  EXPECT_FALSE(TensorShape::FromDims({std::numeric_limits<int64_t>::max(),
                                      std::numeric_limits<int64_t>::max()})
                   .ok());
  EXPECT_EQ(TensorShape::FromDims({2, -1}).status().message(),
            "shape [2,-1] has a negative dimension");
}

TEST(TensorShapeTest, AddDimWithStatusRefusesAndLeavesTheShape) {
  TensorShape shape({int64_t{1} << 40});
  absl::Status s = shape.AddDimWithStatus(int64_t{1} << 9);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("too large"), std::string::npos) << s;
  EXPECT_EQ(shape, TensorShape({int64_t{1} << 40}));
  EXPECT_EQ(shape.num_elements(), int64_t{1} << 40);
  EXPECT_FALSE(shape.AddDimWithStatus(-3).ok());
  EXPECT_EQ(shape.dims(), 1);
  ASSERT_TRUE(shape.AddDimWithStatus(int64_t{1} << 8).ok());
  EXPECT_EQ(shape.num_elements(), k2to48);
  // With a 0 dim the element count is 0 but the other dims still count.
  TensorShape empty({0, int64_t{1} << 40});
  EXPECT_FALSE(empty.AddDimWithStatus(int64_t{1} << 9).ok());
  EXPECT_EQ(empty, TensorShape({0, int64_t{1} << 40}));
  EXPECT_TRUE(empty.AddDimWithStatus(int64_t{1} << 8).ok());
  EXPECT_EQ(empty.num_elements(), 0);
  EXPECT_FALSE(empty.AddDimWithStatus(2).ok());
}

TEST(TensorShapeTest, SetDimWithStatusRefusesAndLeavesTheShape) {
  TensorShape shape({int64_t{1} << 24, 4, int64_t{1} << 20});
  EXPECT_FALSE(shape.SetDimWithStatus(1, 32).ok());
  EXPECT_EQ(shape, TensorShape({int64_t{1} << 24, 4, int64_t{1} << 20}));
  EXPECT_EQ(shape.num_elements(), int64_t{1} << 46);
  EXPECT_FALSE(shape.SetDimWithStatus(1, -1).ok());
  ASSERT_TRUE(shape.SetDimWithStatus(1, 16).ok());
  EXPECT_EQ(shape.num_elements(), k2to48);
  ASSERT_TRUE(shape.SetDimWithStatus(0, 0).ok());
  EXPECT_EQ(shape.num_elements(), 0);
  shape.RemoveDim(0);
  EXPECT_EQ(shape.num_elements(), int64_t{1} << 24);
}

TEST(TensorShapeDeathTest, UncheckedVariantsAbortPastTheLimit) {
  TensorShape shape({int64_t{1} << 40});
  EXPECT_DEATH(shape.AddDim(int64_t{1} << 9), "check failed");
  EXPECT_DEATH(shape.set_dim(0, -1), "check failed");
}

// A variant value that counts how many of its kind are alive.
struct Counted : VariantValue {
  explicit Counted(int* live, int v) : live(live), value(v) { ++*live; }
  ~Counted() override { --*live; }
  std::string TypeName() const override { return "Counted"; }
  std::string DebugString() const override { return "Counted(" + std::to_string(value) + ")"; }
  int* live;
  int value;
};

struct Counter : ResourceBase {
  std::string DebugString() const override { return "Counter"; }
};

TEST(TensorVariantTest, ElementsAreConstructedSharedAndDestroyed) {
  int live = 0;
  {
    auto t = Tensor::Allocate(HostAllocator(), DT_VARIANT, TensorShape({3}),
                              TensorBuffer::Init::kUninitialized);
    ASSERT_TRUE(t.ok()) << t.status();
    for (const Variant& v : t->flat<Variant>()) EXPECT_TRUE(v.empty());
    t->flat<Variant>()[1] = Variant(std::make_shared<Counted>(&live, 7));
    EXPECT_EQ(live, 1);
    Tensor copy = *t;  // shares the buffer, so the value too
    ASSERT_NE(copy.flat<Variant>()[1].get<Counted>(), nullptr);
    EXPECT_EQ(copy.flat<Variant>()[1].get<Counted>()->value, 7);
    EXPECT_EQ(t->TotalBytes(), 3 * sizeof(Variant));
    EXPECT_EQ(t->DebugString(), "Tensor<type: variant shape: [3] values: Variant<empty> "
                                "Counted(7) Variant<empty>>");
  }
  EXPECT_EQ(live, 0);
}

TEST(TensorVariantTest, MutableOnlyForTheSoleHolder) {
  int live = 0;
  Variant a(std::make_shared<Counted>(&live, 1));
  ASSERT_NE(a.MutableIfUnique<Counted>(), nullptr);
  Variant b = a;
  EXPECT_EQ(a.MutableIfUnique<Counted>(), nullptr);
  EXPECT_EQ(b.MutableIfUnique<Counted>(), nullptr);
  b = Variant();
  EXPECT_NE(a.MutableIfUnique<Counted>(), nullptr);
}

TEST(TensorVariantTest, ResourceHandlesReachOneObject) {
  Tensor t(DT_RESOURCE, TensorShape());
  EXPECT_EQ(t.scalar<ResourceHandle>().get<Counter>(), nullptr);
  auto counter = std::make_shared<Counter>();
  t.scalar<ResourceHandle>() = ResourceHandle("c", counter);
  Tensor copy = t;
  EXPECT_EQ(copy.scalar<ResourceHandle>().get<Counter>(), counter.get());
  EXPECT_EQ(copy.scalar<ResourceHandle>().name(), "c");
  EXPECT_EQ(t.DebugString(), "Tensor<type: resource shape: [] values: ResourceHandle(c: Counter)>");
}

TEST(TensorVariantTest, ProtosCarryDtypeAndShapeOnly) {
  int live = 0;
  Tensor t(DT_VARIANT, TensorShape({2}));
  t.flat<Variant>()[0] = Variant(std::make_shared<Counted>(&live, 1));
  TensorProto content, field;
  t.AsProtoTensorContent(&content);
  t.AsProtoField(&field);
  for (const TensorProto* p : {&content, &field}) {
    EXPECT_EQ(p->dtype(), DT_VARIANT);
    EXPECT_EQ(p->tensor_shape().dim_size(), 1);
    EXPECT_TRUE(p->tensor_content().empty());
    auto back = Tensor::FromProto(*p);
    EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  }
  TensorProto r = ProtoOf(DT_RESOURCE, {});
  EXPECT_EQ(Tensor::FromProto(r).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace graphrun
