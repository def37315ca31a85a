// Tests for Assert: silent when the condition holds, else InvalidArgument
// with each data tensor summarized.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing/kernel_test_util.h"

namespace graphrun {
namespace {

using testing::AttrI;
using testing::RunOp;

TEST(AssertTest, PassesOrFailsWithTheData) {
  const std::vector<Tensor> data = {Tensor::Scalar<std::string>("x is "),
                                    Tensor::FromVector<int32_t>({1, 2, 3, 4})};
  std::vector<Tensor> in = {Tensor::Scalar<bool>(true)};
  in.insert(in.end(), data.begin(), data.end());
  auto ok = RunOp("Assert", {}, in);
  EXPECT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(ok->empty());
  in[0] = Tensor::Scalar<bool>(false);
  absl::Status s = RunOp("Assert", {}, in).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "assertion failed: [x is ] [1 2 3...]");
  s = RunOp("Assert", {{"summarize", AttrI(10)}}, in).status();
  EXPECT_EQ(s.message(), "assertion failed: [x is ] [1 2 3 4]");
  in[0] = Tensor::FromVector<bool>({true, true});
  s = RunOp("Assert", {}, in).status();
  EXPECT_EQ(s.message(), "In[0] should be a scalar: [2]");
}

}  // namespace
}  // namespace graphrun
