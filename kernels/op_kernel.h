// OpKernel and AsyncOpKernel: how a node's computation runs on a device.
//
// A kernel is built once per node and device (OpKernelConstruction: read and
// check attrs; errors there fail session setup and name the node), then
// Compute()d once per step with an OpKernelContext that holds the step's
// inputs and receives its outputs. Compute may run concurrently for
// different steps, so kernels keep no per-step state in members.
//
// A synchronous kernel must never block (no waiting on other nodes, queues
// or the network); a kernel that must wait is an AsyncOpKernel and calls
// `done` exactly once, from any thread, when finished.
//
//   class ReluOp : public OpKernel {
//    public:
//     using OpKernel::OpKernel;
//     void Compute(OpKernelContext* ctx) override {
//       const Tensor& x = ctx->input(0);
//       Tensor* y = nullptr;
//       OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output(0, 0, x.shape(), &y));
//       ...
//     }
//   };
#ifndef GRAPHRUN_KERNELS_OP_KERNEL_H_
#define GRAPHRUN_KERNELS_OP_KERNEL_H_

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "graph/attr_slice.h"
#include "graph/protos/node_def.pb.h"
#include "graph/tensor.h"
#include "kernels/device_base.h"

namespace graphrun {

class OpKernelContext;
class Rendezvous;  // kernels/rendezvous.h

// The values a step feeds in (_Arg nodes read args[index]) and fetches out
// (_Retval nodes write retvals[index]). Distinct indices are written by
// distinct nodes, so no lock is needed.
struct CallFrame {
  std::vector<Tensor> args;
  std::vector<Tensor> retvals;
};

// What a kernel constructor sees.
class OpKernelConstruction {
 public:
  OpKernelConstruction(DeviceBase* device, const NodeDef* def,
                       const OpDef* op_def, std::vector<DataType> input_types,
                       std::vector<DataType> output_types)
      : device_(device),
        def_(def),
        op_def_(op_def),
        input_types_(std::move(input_types)),
        output_types_(std::move(output_types)) {}

  DeviceBase* device() const { return device_; }
  const NodeDef& def() const { return *def_; }
  const OpDef* op_def() const { return op_def_; }
  AttrSlice attrs() const { return AttrSlice(&def_->attr(), op_def_); }
  template <typename T>
  absl::Status GetAttr(absl::string_view name, T* value) const {
    return attrs().Get(name, value);
  }
  const std::vector<DataType>& input_types() const { return input_types_; }
  const std::vector<DataType>& output_types() const { return output_types_; }
  // Per output, whether the kernel keeps it in host memory on a device with
  // memory of its own (its HostMemory outputs); empty: none (and always on
  // CPUs, whose memory is the host's).
  const std::vector<bool>& output_on_host() const { return output_on_host_; }
  void set_output_on_host(std::vector<bool> on_host) { output_on_host_ = std::move(on_host); }

  // The first failure wins; the session reports it with the node's name.
  void SetStatus(const absl::Status& s) {
    if (status_.ok()) status_ = s;
  }
  const absl::Status& status() const { return status_; }

 private:
  DeviceBase* device_;
  const NodeDef* def_;
  const OpDef* op_def_;
  std::vector<DataType> input_types_;
  std::vector<DataType> output_types_;
  std::vector<bool> output_on_host_;
  absl::Status status_;
};

class OpKernel {
 public:
  explicit OpKernel(OpKernelConstruction* ctx);
  virtual ~OpKernel() = default;
  OpKernel(const OpKernel&) = delete;
  OpKernel& operator=(const OpKernel&) = delete;

  // Runs the computation for one step. Errors go to ctx->SetStatus().
  virtual void Compute(OpKernelContext* ctx) = 0;

  // Async kernels override this to return themselves.
  virtual class AsyncOpKernel* AsAsync() { return nullptr; }

  // True if Compute is expensive enough to be worth a thread hop. The
  // executor runs inexpensive kernels inline on the thread that made them
  // ready. Default: true; cheap kernels (Identity, Shape, Const...) say no.
  virtual bool IsExpensive() const { return expensive_; }

  // True for kernels that must run even when an input is dead (control
  // flow's untaken branch): _Send, so the receiving partition learns of the
  // deadness instead of waiting forever. Such a kernel sees
  // ctx->is_input_dead() and its (uninitialized) inputs must not be read.
  virtual bool RunsOnDeadInput() const { return false; }

  const std::string& name() const { return def_.name(); }
  const std::string& type_string() const { return def_.op(); }
  const NodeDef& def() const { return def_; }
  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  // Whether output i lives in host memory on a device with memory of its
  // own (OpKernelConstruction::output_on_host).
  bool output_on_host(int i) const {
    return !output_on_host_.empty() && output_on_host_[static_cast<size_t>(i)];
  }

 protected:
  void set_expensive(bool expensive) { expensive_ = expensive; }

 private:
  // What the executor and the kernels read on every step comes first and
  // inline, in the cache line the virtual call loads anyway: in a graph of
  // thousands of small nodes each further line is a cache miss per node.
  const absl::InlinedVector<DataType, 4> input_types_;
  const absl::InlinedVector<DataType, 4> output_types_;
  const absl::InlinedVector<bool, 4> output_on_host_;
  bool expensive_ = true;
  const NodeDef def_;
};

class AsyncOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  using DoneCallback = std::function<void()>;

  // Must call `done` exactly once, after setting outputs or an error.
  virtual void ComputeAsync(OpKernelContext* ctx, DoneCallback done) = 0;

  AsyncOpKernel* AsAsync() final { return this; }
  // Runs ComputeAsync and waits: for callers that need a synchronous call.
  void Compute(OpKernelContext* ctx) final;
};

// Cancellation of a step: kernels that wait (async ones) register a
// callback; StartCancel() runs them once. Thread-safe.
class CancellationManager {
 public:
  using Callback = std::function<void()>;
  // Returns false (and does not register) if cancellation already started.
  bool Register(int64_t token, Callback cb);
  // Removes the callback. If cancellation has started, waits until every
  // callback has returned, so the caller may free what they use. A
  // callback must not deregister itself.
  void Deregister(int64_t token);
  // Removes the callback if it has not started; never waits. For callers
  // whose callback only touches state it co-owns (e.g. via shared_ptr).
  void TryDeregister(int64_t token);
  int64_t NewToken() { return next_token_.fetch_add(1); }
  void StartCancel();
  bool IsCancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  absl::Mutex mu_;
  // Keyed by token: a step with many waiting kernels (hundreds of Recvs)
  // registers and deregisters in O(1).
  absl::flat_hash_map<int64_t, Callback> callbacks_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> next_token_{0};
  absl::Notification callbacks_done_;
};

// What a kernel sees while it computes one step.
class OpKernelContext {
 public:
  struct Params {
    int64_t step_id = 0;
    DeviceBase* device = nullptr;
    OpKernel* op_kernel = nullptr;
    // The node's inputs, one per input slot, all initialized (a Merge's
    // are not: only its live input is set). The kernel may take (forward)
    // an input it holds the only reference to.
    Tensor* inputs = nullptr;
    int num_inputs = 0;
    CancellationManager* cancellation = nullptr;
    // Frame and iteration of this execution (0, 0 outside loops); part of
    // rendezvous keys once control flow arrives.
    int64_t frame_id = 0;
    int64_t iter_id = 0;
    // Where this step's _Send and _Recv kernels meet (kernels/rendezvous.h);
    // null when the step has none (one device, feeds by call frame).
    Rendezvous* rendezvous = nullptr;
    // Feeds (_Arg) and fetches (_Retval) of this step.
    CallFrame* call_frame = nullptr;
    // An input is dead (only for kernels that RunsOnDeadInput()).
    bool is_input_dead = false;
    // The worker session whose master runs this step (empty in a session
    // of the client's own process).
    absl::string_view session_handle;
  };

  explicit OpKernelContext(Params* params);

  int num_inputs() const { return params_->num_inputs; }
  const Tensor& input(int i) const { return params_->inputs[i]; }
  // False for a Merge input that has not arrived (every other kernel sees
  // all its inputs set).
  bool has_input(int i) const { return params_->inputs[i].IsInitialized(); }
  DataType input_dtype(int i) const { return params_->op_kernel->input_type(i); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  DataType expected_output_dtype(int i) const {
    return params_->op_kernel->output_type(i);
  }

  // Allocates output i with the kernel's declared dtype, in the device's
  // memory or, for a HostMemory output, in host memory.
  absl::Status allocate_output(int i, const TensorShape& shape, Tensor** out);
  // The allocator output i comes from.
  Allocator* output_allocator(int i) const;
  // Reuses input `input` as output `output` if the shapes' element counts
  // and dtypes match and nothing else holds the buffer; else allocates.
  absl::Status forward_input_or_allocate_output(int input, int output,
                                                const TensorShape& shape,
                                                Tensor** out);
  // The reuse alone: true (and the input's slot emptied) if input `input`
  // became output `output` with `shape`; false, changing nothing, if it
  // could not (see forward_input_or_allocate_output).
  bool forward_input(int input, int output, const TensorShape& shape, Tensor** out);
  // Scratch memory that does not outlive the step (in host memory with
  // attr.on_host).
  absl::Status allocate_temp(DataType dtype, const TensorShape& shape,
                             Tensor* out, AllocatorAttributes attr = {});
  // Sets output i to an existing tensor (shares its buffer).
  void set_output(int i, Tensor tensor);

  // Marks every output dead (control flow's untaken branch, or a dead
  // tensor received from another device): consumers do not run, and their
  // outputs are dead too.
  void set_outputs_dead() { outputs_dead_ = true; }
  bool is_input_dead() const { return params_->is_input_dead; }
  bool outputs_dead() const { return outputs_dead_; }

  // The first error wins.
  void SetStatus(const absl::Status& status);
  const absl::Status& status() const { return status_; }

  DeviceBase* device() const { return params_->device; }
  const Eigen::ThreadPoolDevice& eigen_cpu_device() const {
    return *params_->device->eigen_cpu_device();
  }
  OpKernel& op_kernel() const { return *params_->op_kernel; }
  const Params& params() const { return *params_; }
  CancellationManager* cancellation() const { return params_->cancellation; }

  // The outputs, for the executor to take after Compute.
  absl::InlinedVector<Tensor, 4>* mutable_outputs() { return &outputs_; }

 private:
  Params* params_;
  absl::InlinedVector<Tensor, 4> outputs_;
  absl::Status status_;
  bool outputs_dead_ = false;
};

// "kernel 'op_name' (Op) on device: message" context is added by the caller.
#define OP_REQUIRES(CTX, EXP, STATUS) \
  do {                                \
    if (!(EXP)) {                     \
      (CTX)->SetStatus(STATUS);       \
      return;                         \
    }                                 \
  } while (0)

#define OP_REQUIRES_OK(CTX, ...)             \
  do {                                       \
    ::absl::Status gr_s_ = (__VA_ARGS__);    \
    if (!gr_s_.ok()) {                       \
      (CTX)->SetStatus(gr_s_);               \
      return;                                \
    }                                        \
  } while (0)

#define OP_REQUIRES_ASYNC(CTX, EXP, STATUS, DONE) \
  do {                                            \
    if (!(EXP)) {                                 \
      (CTX)->SetStatus(STATUS);                   \
      (DONE)();                                   \
      return;                                     \
    }                                             \
  } while (0)

#define OP_REQUIRES_OK_ASYNC(CTX, STATUS, DONE) \
  do {                                         \
    ::absl::Status gr_s_ = (STATUS);           \
    if (!gr_s_.ok()) {                         \
      (CTX)->SetStatus(gr_s_);                 \
      (DONE)();                                \
      return;                                  \
    }                                          \
  } while (0)

}  // namespace graphrun

#endif  // GRAPHRUN_KERNELS_OP_KERNEL_H_
