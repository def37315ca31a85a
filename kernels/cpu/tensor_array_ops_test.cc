// Tests for the TensorArray kernels (version 3): values worked out by hand,
// and TensorFlow's rules and messages for writing twice, reading twice
// (clear_after_read), reading what was never written, sizes, dtypes and
// closed arrays.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AttrB;
using testing::AttrShape;
using testing::AttrS;
using testing::AttrType;
using testing::RunOp;
using Attrs = std::map<std::string, AttrValue>;

Tensor I32(int32_t v) { return Tensor::Scalar<int32_t>(v); }
Tensor F32(const std::vector<float>& v, const TensorShape& s) {
  return Tensor::FromVector(v, s);
}
std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.flat<float>().begin(), t.flat<float>().end());
}
const Tensor kFlow = Tensor::Scalar<float>(0.f);

struct Array {
  Tensor handle;
  Tensor flow;
};

Array Make(int32_t size, Attrs attrs = {}) {
  attrs["dtype"] = AttrType(DT_FLOAT);
  if (!attrs.count("tensor_array_name")) attrs["tensor_array_name"] = AttrS("ta");
  auto out = RunOp("TensorArrayV3", attrs, {I32(size)});
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  EXPECT_EQ((*out)[0].dtype(), DT_RESOURCE);
  EXPECT_EQ((*out)[1].scalar<float>(), 0.f);
  return {(*out)[0], (*out)[1]};
}

absl::Status Write(const Array& a, int32_t i, const Tensor& v) {
  auto out = RunOp("TensorArrayWriteV3", {}, {a.handle, I32(i), v, a.flow});
  if (out.ok()) {
    EXPECT_EQ((*out)[0].scalar<float>(), a.flow.scalar<float>());
  }
  return out.status();
}

absl::StatusOr<Tensor> Read(const Array& a, int32_t i) {
  auto out = RunOp("TensorArrayReadV3", {{"dtype", AttrType(DT_FLOAT)}},
                   {a.handle, I32(i), a.flow});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

absl::StatusOr<Tensor> Gather(const Array& a, const std::vector<int32_t>& indices,
                              Attrs attrs = {}) {
  attrs["dtype"] = AttrType(DT_FLOAT);
  auto out = RunOp("TensorArrayGatherV3", attrs,
                   {a.handle, Tensor::FromVector(indices), a.flow});
  if (!out.ok()) return out.status();
  return (*out)[0];
}

int32_t Size(const Array& a) {
  auto out = RunOp("TensorArraySizeV3", {}, {a.handle, a.flow});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].scalar<int32_t>() : -1;
}

TEST(TensorArrayTest, WriteReadOnceThenCleared) {
  Array a = Make(3);
  EXPECT_EQ(Size(a), 3);
  ASSERT_TRUE(Write(a, 1, F32({1, 2}, TensorShape({2}))).ok());
  auto r = Read(a, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<float>{1, 2}));
  // clear_after_read: a second read fails; so does writing a read index.
  absl::Status s = Read(a, 1).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "TensorArray ta: Could not read index 1 twice"))
      << s;
  s = Write(a, 1, F32({3, 4}, TensorShape({2})));
  EXPECT_TRUE(absl::StrContains(s.message(), "because it has already been read")) << s;
  ASSERT_TRUE(Write(a, 0, F32({5, 6}, TensorShape({2}))).ok());
  s = Write(a, 0, F32({5, 6}, TensorShape({2})));
  EXPECT_TRUE(absl::StrContains(s.message(), "because it has already been written to")) << s;
  s = Write(a, 3, F32({5, 6}, TensorShape({2})));
  EXPECT_TRUE(absl::StrContains(
      s.message(), "Tried to write to index 3 but array is not resizeable and size is: 3"))
      << s;
  s = Read(a, 7).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "Tried to read from index 7 but array size is: 3"))
      << s;
  s = Write(a, 2, Tensor::FromVector<int32_t>({1}));
  EXPECT_TRUE(absl::StrContains(s.message(), "TensorArray dtype is float")) << s;
}

TEST(TensorArrayTest, ReadManyTimesWithoutClearAfterRead) {
  Array a = Make(1, {{"clear_after_read", AttrB(false)}});
  ASSERT_TRUE(Write(a, 0, F32({7}, TensorShape({1}))).ok());
  for (int i = 0; i < 3; ++i) {
    auto r = Read(a, 0);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(Values(*r), (std::vector<float>{7}));
  }
}

TEST(TensorArrayTest, UnwrittenReadsAsZerosOnlyWithAKnownShape) {
  Array known = Make(2, {{"element_shape", AttrShape({2, 1})}});
  auto r = Read(known, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape(), TensorShape({2, 1}));
  EXPECT_EQ(Values(*r), (std::vector<float>{0, 0}));
  Array unknown = Make(2);
  absl::Status s = Read(unknown, 1).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "the element shape is not fully defined")) << s;
  // identical_element_shapes: the first write fixes the shape.
  Array same = Make(2, {{"identical_element_shapes", AttrB(true)}});
  ASSERT_TRUE(Write(same, 0, F32({1, 2, 3}, TensorShape({3}))).ok());
  r = Read(same, 1);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(*r), (std::vector<float>{0, 0, 0}));
  s = Write(same, 1, F32({1}, TensorShape({1})));
  EXPECT_TRUE(absl::StrContains(s.message(), "incompatible with the TensorArray's inferred"))
      << s;
}

TEST(TensorArrayTest, ScatterThenGather) {
  Array a = Make(3);
  const Tensor rows = F32({0, 1, 2, 3, 4, 5}, TensorShape({3, 2}));
  auto out = RunOp("TensorArrayScatterV3", {},
                   {a.handle, Tensor::FromVector<int32_t>({2, 0, 1}), rows, a.flow});
  ASSERT_TRUE(out.ok()) << out.status();
  auto g = Gather(a, {0, 1, 2});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values(*g), (std::vector<float>{2, 3, 4, 5, 0, 1}));
  // Scatter past the size of a fixed-size array.
  Array b = Make(2);
  absl::Status s = RunOp("TensorArrayScatterV3", {},
                         {b.handle, Tensor::FromVector<int32_t>({0, 1, 2}), rows, b.flow})
                       .status();
  EXPECT_TRUE(absl::StrContains(s.message(), "Max scatter index must be < array size (2 vs. 2)"))
      << s;
  s = RunOp("TensorArrayScatterV3", {},
            {b.handle, Tensor::FromVector<int32_t>({0}), rows, b.flow})
          .status();
  EXPECT_TRUE(absl::StrContains(s.message(), "Expected len(indices) == values.shape[0]")) << s;
}

TEST(TensorArrayTest, DynamicSizeGrows) {
  Array a = Make(0, {{"dynamic_size", AttrB(true)}});
  ASSERT_TRUE(Write(a, 2, F32({9}, TensorShape({1}))).ok());
  EXPECT_EQ(Size(a), 3);
}

TEST(TensorArrayTest, GatherChecksShapesAndHandlesEmpty) {
  Array a = Make(2);
  ASSERT_TRUE(Write(a, 0, F32({1}, TensorShape({1}))).ok());
  ASSERT_TRUE(Write(a, 1, F32({1, 2}, TensorShape({2}))).ok());
  absl::Status s = Gather(a, {0, 1}).status();
  EXPECT_TRUE(absl::StrContains(s.message(), "TensorArray has inconsistent shapes")) << s;
  Array e = Make(0);
  auto g = Gather(e, {}, {{"element_shape", AttrShape({4})}});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->shape(), TensorShape({0, 4}));
  // Without a known element shape an empty gather is refused.
  Array unknown = Make(0);
  EXPECT_EQ(Gather(unknown, {}).status().code(), absl::StatusCode::kUnimplemented);
}

TEST(TensorArrayTest, SplitThenConcat) {
  Array a = Make(3);
  const Tensor x = F32({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, TensorShape({5, 2}));
  auto out = RunOp("TensorArraySplitV3", {},
                   {a.handle, x, Tensor::FromVector<int64_t>({2, 0, 3}), a.flow});
  ASSERT_TRUE(out.ok()) << out.status();
  auto r = Read(a, 2);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape(), TensorShape({3, 2}));
  EXPECT_EQ(Values(*r), (std::vector<float>{4, 5, 6, 7, 8, 9}));

  Array b = Make(3, {{"clear_after_read", AttrB(false)}});
  ASSERT_TRUE(RunOp("TensorArraySplitV3", {},
                    {b.handle, x, Tensor::FromVector<int64_t>({2, 0, 3}), b.flow})
                  .ok());
  auto cat = RunOp("TensorArrayConcatV3", {{"dtype", AttrType(DT_FLOAT)}}, {b.handle, b.flow});
  ASSERT_TRUE(cat.ok()) << cat.status();
  EXPECT_EQ((*cat)[0].shape(), TensorShape({5, 2}));
  EXPECT_EQ(Values((*cat)[0]), Values(x));
  EXPECT_EQ((*cat)[1].flat<int64_t>()[0], 2);
  EXPECT_EQ((*cat)[1].flat<int64_t>()[1], 0);
  EXPECT_EQ((*cat)[1].flat<int64_t>()[2], 3);

  absl::Status s = RunOp("TensorArraySplitV3", {},
                         {b.handle, x, Tensor::FromVector<int64_t>({2, 2}), b.flow})
                       .status();
  EXPECT_TRUE(absl::StrContains(s.message(), "Expected sum of lengths")) << s;
  Array c = Make(2);
  s = RunOp("TensorArraySplitV3", {},
            {c.handle, x, Tensor::FromVector<int64_t>({2, 0, 3}), c.flow})
          .status();
  EXPECT_TRUE(absl::StrContains(s.message(), "TensorArray's size is not equal")) << s;
}

TEST(TensorArrayTest, ClosedArrayRefusesEverything) {
  Array a = Make(2);
  ASSERT_TRUE(RunOp("TensorArrayCloseV3", {}, {a.handle}).ok());
  absl::Status s = Write(a, 0, F32({1}, TensorShape({1})));
  EXPECT_TRUE(absl::StrContains(s.message(), "TensorArray ta has already been closed.")) << s;
  EXPECT_FALSE(RunOp("TensorArraySizeV3", {}, {a.handle, a.flow}).ok());
}

TEST(TensorArrayTest, EachCreationIsANewArray) {
  Array a = Make(1);
  Array b = Make(1);
  ASSERT_TRUE(Write(a, 0, F32({1}, TensorShape({1}))).ok());
  ASSERT_TRUE(Write(b, 0, F32({2}, TensorShape({1}))).ok());
  EXPECT_EQ(Values(*Read(a, 0)), (std::vector<float>{1}));
  EXPECT_EQ(Values(*Read(b, 0)), (std::vector<float>{2}));
}

}  // namespace
}  // namespace graphrun
