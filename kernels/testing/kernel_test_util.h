// Helpers for kernel tests: a host CPU device with an intra-op pool, and
// RunOp() which builds a node from (op, attrs, inputs), creates its kernel
// through the KernelRegistry and computes it once.
//
//   auto out = RunOp("MatMul", {{"transpose_b", AttrB(true)}}, {a, b});
//   ASSERT_TRUE(out.ok()) << out.status();
//   EXPECT_EQ((*out)[0].flat<float>()[0], 6.f);
#ifndef GRAPHRUN_KERNELS_TESTING_KERNEL_TEST_UTIL_H_
#define GRAPHRUN_KERNELS_TESTING_KERNEL_TEST_UTIL_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/protos/attr_value.pb.h"
#include "graph/tensor.h"
#include "kernels/device_base.h"

namespace graphrun {
namespace testing {

// A CPU device for tests: host allocator, Eigen pool of `threads`.
std::unique_ptr<DeviceBase> MakeTestCpuDevice(int threads = 2);

AttrValue AttrB(bool v);
AttrValue AttrI(int64_t v);
AttrValue AttrF(float v);
AttrValue AttrS(const std::string& v);
AttrValue AttrType(DataType v);
AttrValue AttrInts(const std::vector<int64_t>& v);
AttrValue AttrTypes(const std::vector<DataType>& v);
AttrValue AttrTensor(const Tensor& v);
AttrValue AttrShape(const std::vector<int64_t>& dims);  // -1 = unknown

// Builds a node "test_node" of `op` with these attrs; type attrs named by
// the op's inputs ("T", "Tidx", ...) and number attrs ("N") are filled from
// `inputs` when not given. Runs the CPU kernel once on a shared test device.
absl::StatusOr<std::vector<Tensor>> RunOp(
    const std::string& op, const std::map<std::string, AttrValue>& attrs,
    const std::vector<Tensor>& inputs, int threads = 2);

// Approximate comparison for float results.
bool AllClose(const Tensor& a, const Tensor& b, double rtol = 1e-5,
              double atol = 1e-6, std::string* why = nullptr);

}  // namespace testing
}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_TESTING_KERNEL_TEST_UTIL_H_
