#include "kernels/testing/kernel_test_util.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/status_macros.h"
#include "kernels/eigen.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"
#include "kernels/resource_mgr.h"

namespace graphrun {
namespace testing {
namespace {

class TestCpuDevice : public DeviceBase {
 public:
  explicit TestCpuDevice(int threads)
      : name_("/job:localhost/replica:0/task:0/device:CPU:0"),
        type_(kDeviceCpu),
        pool_(threads),
        eigen_(&pool_, threads),
        threads_(threads) {}
  const std::string& name() const override { return name_; }
  const std::string& device_type() const override { return type_; }
  Allocator* allocator() const override { return HostAllocator(); }
  const Eigen::ThreadPoolDevice* eigen_cpu_device() const override { return &eigen_; }
  int intra_op_threads() const override { return threads_; }
  ResourceMgr* resource_manager() override { return &resources_; }

 private:
  ResourceMgr resources_;
  std::string name_, type_;
  Eigen::ThreadPool pool_;
  Eigen::ThreadPoolDevice eigen_;
  int threads_;
};

}  // namespace

std::unique_ptr<DeviceBase> MakeTestCpuDevice(int threads) {
  return std::make_unique<TestCpuDevice>(threads);
}

absl::StatusOr<std::vector<Tensor>> RunOp(
    const std::string& op, const std::map<std::string, AttrValue>& attrs,
    const std::vector<Tensor>& inputs, int threads) {
  GR_ASSIGN_OR_RETURN(auto steps, RunOpSteps(op, attrs, {inputs}, threads));
  return std::move(steps[0]);
}

absl::StatusOr<std::vector<std::vector<Tensor>>> RunOpSteps(
    const std::string& op, const std::map<std::string, AttrValue>& attrs,
    const std::vector<std::vector<Tensor>>& steps, int threads) {
  if (steps.empty()) return absl::InvalidArgumentError("RunOpSteps: no steps");
  const std::vector<Tensor>& inputs = steps[0];
  GR_ASSIGN_OR_RETURN(const OpDef* op_def, OpRegistry::Global()->LookUp(op));
  NodeDef def;
  def.set_name("test_node");
  def.set_op(op);
  for (const auto& [k, v] : attrs) (*def.mutable_attr())[k] = v;
  // Infer type/number attrs from the inputs, positionally.
  size_t next = 0;
  for (const ArgDef& arg : op_def->inputs) {
    size_t count = 1;
    if (!arg.number_attr.empty()) {
      auto it = def.attr().find(arg.number_attr);
      if (it == def.attr().end()) {
        // A list arg without N given takes the rest of the inputs minus the
        // remaining single args.
        size_t remaining_args = 0;
        bool after = false;
        for (const ArgDef& a : op_def->inputs) {
          if (&a == &arg) { after = true; continue; }
          if (after) ++remaining_args;
        }
        count = inputs.size() - next - remaining_args;
        (*def.mutable_attr())[arg.number_attr].set_i(static_cast<int64_t>(count));
      } else {
        count = static_cast<size_t>(it->second.i());
      }
    }
    if (!arg.type_list_attr.empty() && !def.attr().contains(arg.type_list_attr)) {
      AttrValue list;
      for (size_t i = next; i < inputs.size(); ++i) list.mutable_list()->add_type(inputs[i].dtype());
      count = inputs.size() - next;
      (*def.mutable_attr())[arg.type_list_attr] = list;
    }
    if (!arg.type_attr.empty() && !def.attr().contains(arg.type_attr) && next < inputs.size()) {
      (*def.mutable_attr())[arg.type_attr].set_type(inputs[next].dtype());
    }
    next += count;
  }
  for (size_t i = 0; i < inputs.size(); ++i) def.add_input(absl::StrCat("in", i));

  GR_RETURN_IF_ERROR(ValidateAttrs(*op_def, def.attr()));
  std::vector<DataType> in_types, out_types;
  GR_RETURN_IF_ERROR(ComputeArgTypes(*op_def, AttrSlice(&def.attr(), op_def),
                                     &in_types, &out_types));
  if (in_types.size() != inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, " takes ", in_types.size(), " inputs, test gave ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (BaseType(in_types[i]) != inputs[i].dtype()) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, " input ", i, " wants ", DataTypeString(in_types[i]), ", test gave ",
          DataTypeString(inputs[i].dtype())));
    }
  }
  static DeviceBase* const device1 = MakeTestCpuDevice(1).release();
  static DeviceBase* const device4 = MakeTestCpuDevice(4).release();
  DeviceBase* device = threads <= 1 ? device1 : device4;
  // Each call is a session of its own: no state (variables, random
  // generators) from earlier calls.
  device->resource_manager()->Clear();
  GR_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel,
                      KernelRegistry::Global()->CreateKernel(device, def, op_def,
                                                             in_types, out_types));
  std::vector<std::vector<Tensor>> all;
  for (const std::vector<Tensor>& step : steps) {
    if (step.size() != inputs.size()) {
      return absl::InvalidArgumentError("RunOpSteps: every step needs the same inputs");
    }
    for (size_t i = 0; i < step.size(); ++i) {
      if (step[i].dtype() != inputs[i].dtype()) {
        return absl::InvalidArgumentError(
            absl::StrCat("RunOpSteps: input ", i, " changes dtype from step to step"));
      }
    }
    OpKernelContext::Params params;
    params.device = device;
    params.op_kernel = kernel.get();
    std::vector<Tensor> input_copies = step;  // the kernel may forward these
    params.inputs = input_copies.data();
    params.num_inputs = static_cast<int>(input_copies.size());
    CancellationManager cancellation;
    params.cancellation = &cancellation;
    OpKernelContext ctx(&params);
    kernel->Compute(&ctx);
    GR_RETURN_IF_ERROR(ctx.status());
    std::vector<Tensor> outputs(ctx.mutable_outputs()->begin(),
                                ctx.mutable_outputs()->end());
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i].IsInitialized()) {
        return absl::InternalError(absl::StrCat(op, " did not set output ", i));
      }
      if (outputs[i].dtype() != BaseType(out_types[i])) {
        return absl::InternalError(absl::StrCat(
            op, " output ", i, " is ", DataTypeString(outputs[i].dtype()),
            ", declared ", DataTypeString(out_types[i])));
      }
    }
    all.push_back(std::move(outputs));
  }
  return all;
}

Tensor RunOk(const std::string& op, const std::vector<Tensor>& inputs,
             const std::map<std::string, AttrValue>& attrs) {
  auto out = RunOp(op, attrs, inputs);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? (*out)[0] : Tensor();
}

void ExpectError(const absl::StatusOr<std::vector<Tensor>>& out,
                 absl::StatusCode code, const std::string& message) {
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), code) << out.status();
  EXPECT_NE(std::string(out.status().message()).find(message), std::string::npos)
      << out.status();
}

TensorShape ShapeOf(const std::vector<int64_t>& dims) {
  absl::StatusOr<TensorShape> shape = TensorShape::FromDims(dims);
  if (!shape.ok()) {
    ADD_FAILURE() << shape.status();
    return TensorShape();
  }
  return *shape;
}

int64_t NumElementsOf(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<double> FirstTestInput(int64_t n) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = ((i * 7 + 3) % 11) / 4.0 - 1.25;
  return v;
}

std::vector<double> SecondTestInput(int64_t n) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = ((i * 5 + 1) % 13) / 4.0 - 1.5;
  return v;
}

std::vector<double> RandomDoubles(int64_t n, double lo, double hi, int seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

void ExpectAllNear(const std::vector<double>& got, const std::vector<double>& want,
                   double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int failures = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i]))) &&
        ++failures <= 5) {
      ADD_FAILURE() << what << " element " << i << ": got " << got[i]
                    << ", want " << want[i];
    }
  }
}

bool AllClose(const Tensor& a, const Tensor& b, double rtol, double atol,
              std::string* why) {
  auto fail = [&](std::string msg) {
    if (why) *why = std::move(msg);
    return false;
  };
  if (a.dtype() != b.dtype()) {
    return fail(absl::StrCat("dtypes differ: ", DataTypeString(a.dtype()), " vs ",
                             DataTypeString(b.dtype())));
  }
  if (a.shape() != b.shape()) {
    return fail(absl::StrCat("shapes differ: ", a.shape().DebugString(), " vs ",
                             b.shape().DebugString()));
  }
  bool ok = true;
  VisitDataType(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, complex64> ||
                  std::is_same_v<T, complex128>) {
      for (int64_t i = 0; i < a.NumElements() && ok; ++i) {
        if (!(a.flat<T>()[i] == b.flat<T>()[i])) {
          ok = fail(absl::StrCat("element ", i, " differs"));
        }
      }
    } else {
      for (int64_t i = 0; i < a.NumElements() && ok; ++i) {
        const double x = static_cast<double>(a.flat<T>()[i]);
        const double y = static_cast<double>(b.flat<T>()[i]);
        if (std::isnan(x) && std::isnan(y)) continue;
        if (std::isinf(x) || std::isinf(y)) {
          if (x != y) ok = fail(absl::StrCat("element ", i, ": ", x, " vs ", y));
          continue;
        }
        if (std::abs(x - y) > atol + rtol * std::abs(y)) {
          ok = fail(absl::StrCat("element ", i, ": ", x, " vs ", y));
        }
      }
    }
  });
  return ok;
}

}  // namespace testing
}  // namespace graphrun
