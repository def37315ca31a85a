// LSTMBlockCell against TensorFlow's outputs (lstm_block_cell_test_data.h,
// made by make_lstm_block_cell_test_data.py) under three settings of its
// attrs, and its shape errors.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/lstm_block_cell_test_data.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using ::graphrun::testing::AttrB;
using ::graphrun::testing::AttrF;
using ::graphrun::testing::RunOp;
namespace data = ::graphrun::lstm_block_cell_test;

Tensor Make(const std::vector<float>& values, std::vector<int64_t> dims) {
  Tensor t(DT_FLOAT, *TensorShape::FromDims(dims));
  EXPECT_EQ(static_cast<size_t>(t.NumElements()), values.size());
  for (size_t i = 0; i < values.size() && i < static_cast<size_t>(t.NumElements()); ++i) {
    t.flat<float>()[i] = values[i];
  }
  return t;
}

std::vector<Tensor> Inputs() {
  const int64_t b = data::kBatch, in = data::kInput, u = data::kUnits;
  return {Make(data::k_x, {b, in}),           Make(data::k_cs_prev, {b, u}),
          Make(data::k_h_prev, {b, u}),       Make(data::k_w, {in + u, 4 * u}),
          Make(data::k_wci, {u}),             Make(data::k_wcf, {u}),
          Make(data::k_wco, {u}),             Make(data::k_b, {4 * u})};
}

TEST(LstmBlockCellTest, MatchesTensorFlow) {
  const char* names[] = {"i", "cs", "f", "o", "ci", "co", "h"};
  for (const data::Case& c : data::kCases) {
    SCOPED_TRACE(c.name);
    auto out = RunOp("LSTMBlockCell",
                     {{"forget_bias", AttrF(c.forget_bias)},
                      {"cell_clip", AttrF(c.cell_clip)},
                      {"use_peephole", AttrB(c.use_peephole)}},
                     Inputs());
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 7u);
    for (int k = 0; k < 7; ++k) {
      SCOPED_TRACE(names[k]);
      const Tensor expected = Make(c.outputs[k], {data::kBatch, data::kUnits});
      std::string why;
      EXPECT_TRUE(testing::AllClose((*out)[k], expected, 1e-5, 1e-6, &why)) << why;
    }
  }
}

TEST(LstmBlockCellTest, ClipsTheCellStateOnlyWhenAsked) {
  // Under PeepholeClip (clip 0.8) some |cs| before clipping exceed 0.8, so
  // the data checks the clip; here, a state far out of range stays put
  // without one and is held at the clip with one.
  std::vector<Tensor> inputs = Inputs();
  for (float& v : inputs[1].flat<float>()) v = 50.f;
  for (float clip : {-1.f, 2.f}) {
    auto out = RunOp("LSTMBlockCell", {{"forget_bias", AttrF(5.f)}, {"cell_clip", AttrF(clip)}},
                     inputs);
    ASSERT_TRUE(out.ok()) << out.status();
    for (float cs : (*out)[1].flat<float>()) {
      if (clip > 0) {
        EXPECT_EQ(cs, clip);
      } else {
        EXPECT_GT(cs, 40.f);
      }
    }
  }
}

TEST(LstmBlockCellTest, ShapeErrorsNameTheShapes) {
  struct Bad {
    int input;
    std::vector<int64_t> dims;
    const char* says;
  };
  const int64_t b = data::kBatch, in = data::kInput, u = data::kUnits;
  const Bad cases[] = {
      {3, {in + u + 1, 4 * u}, "w must be [input + units, 4 * units]"},
      {3, {in + u, 4 * u + 4}, "w must be [input + units, 4 * units]"},
      {7, {4 * u + 1}, "b must be [4 * units]"},
      {2, {b + 1, u}, "same batch size"},
      {2, {b, u + 1}, "same number of units"},
      {5, {u + 1}, "peephole weights (input 5)"},
      {0, {b}, "must be matrices"},
  };
  for (const Bad& bad : cases) {
    SCOPED_TRACE(bad.says);
    std::vector<Tensor> inputs = Inputs();
    int64_t n = 1;
    for (int64_t d : bad.dims) n *= d;
    inputs[bad.input] = Make(std::vector<float>(n, 0.5f), bad.dims);
    auto out = RunOp("LSTMBlockCell", {}, inputs);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(out.status().message().find(bad.says), std::string::npos) << out.status();
  }
}

}  // namespace
}  // namespace graphrun
