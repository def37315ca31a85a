// FIFOQueueV2 and the Queue*V2 ops on it, with TensorFlow's semantics
// (core/kernels/fifo_queue.cc, queue_base.cc, queue_ops.cc): elements are
// tuples of tensors of the queue's component types (and shapes, when given);
// an enqueue waits while the queue is full, a dequeue while it holds too few
// elements, each in the order the requests came; closing fails the dequeues
// that can no longer be met (OutOfRange) and later enqueues (Cancelled), and
// with cancel_pending_enqueues the waiting ones. A waiting request ends
// with Cancelled when its step is cancelled. timeout_ms is accepted and
// unused, as in TensorFlow. SyncReplicasOptimizer's token queue is one.
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "graph/status_macros.h"
#include "graph/tensor.h"
#include "graph/tensor_shape.h"
#include "kernels/cpu/shared_resource.h"
#include "kernels/cpu/step_watch.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_kernel.h"

namespace graphrun {
namespace {

using Tuple = std::vector<Tensor>;
using Done = std::function<void()>;

class FifoQueue : public ResourceBase {
 public:
  FifoQueue(std::string name, std::vector<DataType> types, std::vector<PartialShape> shapes,
            int64_t capacity)
      : name_(std::move(name)),
        types_(std::move(types)),
        shapes_(std::move(shapes)),
        capacity_(capacity) {}

  ~FifoQueue() override {
    // Requests still waiting when the queue goes (its session closed).
    for (auto& e : enqueues_) e.finish(absl::CancelledError("Enqueue operation was cancelled"));
    for (auto& d : dequeues_) d.finish(absl::CancelledError("Dequeue operation was cancelled"), {});
  }

  std::string DebugString() const override { return absl::StrCat("FIFOQueue '", name_, "'"); }
  const std::string& name() const { return name_; }
  const std::vector<DataType>& types() const { return types_; }
  const std::vector<PartialShape>& shapes() const { return shapes_; }
  int64_t capacity() const { return capacity_; }

  // Checks one element (`batched`: a batch of elements along dimension 0).
  absl::Status Validate(const Tuple& t, bool batched) const {
    if (t.size() != types_.size()) {
      return absl::InvalidArgumentError(absl::StrCat("Wrong number of components in tuple. Expected ",
                                                     types_.size(), ", got ", t.size()));
    }
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].dtype() != types_[i]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Type mismatch in tuple component ", i, ". Expected ", DataTypeString(types_[i]),
            ", got ", DataTypeString(t[i].dtype())));
      }
      if (batched && t[i].dims() == 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Tuple component ", i, " of a batch to enqueue is a scalar: it needs a batch dimension"));
      }
      if (batched && t[i].dim_size(0) != t[0].dim_size(0)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Dimension 0 of tuple component ", i, " (", t[i].dim_size(0),
            ") does not match dimension 0 of tuple component 0 (", t[0].dim_size(0), ")"));
      }
      if (!shapes_.empty()) {
        TensorShape rest;
        for (int d = batched ? 1 : 0; d < t[i].dims(); ++d) rest.AddDim(t[i].dim_size(d));
        const PartialShape element(rest);
        if (!shapes_[i].IsCompatibleWith(element)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Shape mismatch in tuple component ", i, ". Expected ", shapes_[i].DebugString(),
              ", got ", element.DebugString()));
        }
      }
    }
    return absl::OkStatus();
  }

  // Queues `elements`; `done` runs once they are all in, or with the error.
  // `session`: the worker session whose step enqueues (empty in process).
  void Enqueue(std::deque<Tuple> elements, CancellationManager* cm, absl::string_view session,
               std::function<void(absl::Status)> done) {
    const int64_t id = NextId();
    StepWatch watch;
    if (!watch.Start(cm, [this, id] { Cancel(id, /*enqueue=*/true); })) {
      done(absl::CancelledError("Enqueue operation was cancelled"));
      return;
    }
    std::function<void(absl::Status)> finish = watch.Wrap(std::move(done));
    std::vector<std::function<void()>> ready;
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_ids_.erase(id) > 0) {
        ready.push_back([finish] { finish(absl::CancelledError("Enqueue operation was cancelled")); });
      } else if (closed_) {
        ready.push_back([finish, name = name_] {
          finish(absl::CancelledError(absl::StrCat("FIFOQueue '", name, "' is closed.")));
        });
      } else {
        if (!session.empty()) fillers_.insert(std::string(session));
        lost_ = absl::OkStatus();
        enqueues_.push_back(EnqueueRequest{id, std::move(elements), std::move(finish)});
        Flush(&ready);
      }
    }
    for (auto& f : ready) f();
  }

  // Takes `n` elements (one without `many`: the components as they are);
  // `up_to`: fewer once the queue is closed. `done` gets them or the error.
  void Dequeue(int64_t n, bool many, bool up_to, CancellationManager* cm,
               std::function<void(absl::Status, std::vector<Tuple>)> done) {
    const int64_t id = NextId();
    StepWatch watch;
    if (!watch.Start(cm, [this, id] { Cancel(id, /*enqueue=*/false); })) {
      done(absl::CancelledError("Dequeue operation was cancelled"), {});
      return;
    }
    std::function<void(absl::Status, std::vector<Tuple>)> finish = watch.Wrap(std::move(done));
    std::vector<std::function<void()>> ready;
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_ids_.erase(id) > 0) {
        ready.push_back([finish] { finish(absl::CancelledError("Dequeue operation was cancelled"), {}); });
      } else {
        dequeues_.push_back(DequeueRequest{id, n, many, up_to, std::move(finish)});
        Flush(&ready);
      }
    }
    for (auto& f : ready) f();
  }

  absl::Status Close(bool cancel_pending_enqueues) {
    std::vector<std::function<void()>> ready;
    {
      absl::MutexLock lock(&mu_);
      if (closed_ && !cancel_pending_enqueues) {
        return absl::CancelledError(absl::StrCat("Queue '", name_, "' is already closed."));
      }
      closed_ = true;
      if (cancel_pending_enqueues) {
        for (auto& e : enqueues_) {
          ready.push_back([f = std::move(e.done), name = name_] {
            f(absl::CancelledError("Enqueue operation was cancelled"));
          });
        }
        enqueues_.clear();
      }
      Flush(&ready);
    }
    for (auto& f : ready) f();
    return absl::OkStatus();
  }

  // The sessions whose steps enqueued here are its fillers. When the last
  // of them is lost (not closed by its master: its client died), waiting
  // dequeues, and those that would wait, fail (Aborted, naming the queue
  // and the lost session) until something is enqueued again: a worker
  // waiting for a token from a killed chief's queue runner learns it at
  // once instead of at its timeout.
  void SessionEnded(const std::string& handle, const absl::Status& why) override {
    std::vector<std::function<void()>> ready;
    {
      absl::MutexLock lock(&mu_);
      if (fillers_.erase(handle) == 0 || why.ok() || !fillers_.empty()) return;
      lost_ = absl::AbortedError(
          absl::StrCat(DebugString(), " will not be filled: ", why.message()));
      Flush(&ready);
    }
    for (auto& f : ready) f();
  }

  int64_t Size() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(queue_.size());
  }
  bool IsClosed() const {
    absl::MutexLock lock(&mu_);
    return closed_;
  }

 private:
  struct EnqueueRequest {
    int64_t id;
    std::deque<Tuple> elements;
    std::function<void(absl::Status)> done;
    void finish(const absl::Status& s) { done(s); }
  };
  struct DequeueRequest {
    int64_t id;
    int64_t n;
    bool many, up_to;
    std::function<void(absl::Status, std::vector<Tuple>)> done;
    // The oldest request takes elements as they come (so a batch larger
    // than the capacity fills); they go back to the front of the queue if
    // it fails.
    std::vector<Tuple> taken = {};
    void finish(const absl::Status& s, std::vector<Tuple> got) { done(s, std::move(got)); }
  };

  // Puts a failed request's elements back at the front, in their order.
  void Restore(DequeueRequest* d) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (auto it = d->taken.rbegin(); it != d->taken.rend(); ++it) queue_.push_front(std::move(*it));
    d->taken.clear();
  }

  int64_t NextId() {
    absl::MutexLock lock(&mu_);
    return next_id_++;
  }

  // A waiting request whose step is cancelled ends with Cancelled; one not
  // queued yet (or already done) is remembered, so it ends on arrival.
  void Cancel(int64_t id, bool enqueue) {
    std::function<void()> ready;
    std::vector<std::function<void()>> unblocked;
    {
      absl::MutexLock lock(&mu_);
      if (enqueue) {
        for (auto it = enqueues_.begin(); it != enqueues_.end(); ++it) {
          if (it->id != id) continue;
          ready = [f = std::move(it->done)] {
            f(absl::CancelledError("Enqueue operation was cancelled"));
          };
          enqueues_.erase(it);
          break;
        }
      } else {
        for (auto it = dequeues_.begin(); it != dequeues_.end(); ++it) {
          if (it->id != id) continue;
          Restore(&*it);
          ready = [f = std::move(it->done)] {
            f(absl::CancelledError("Dequeue operation was cancelled"), {});
          };
          dequeues_.erase(it);
          break;
        }
      }
      // Not there yet (or done already): a request arriving with this id
      // ends at once.
      if (!ready) {
        cancelled_ids_.insert(id);
      } else {
        Flush(&unblocked);  // requests behind the cancelled one may go now
      }
    }
    if (ready) ready();
    for (auto& f : unblocked) f();
  }

  // Moves elements from waiting enqueues into the queue and out to waiting
  // dequeues, oldest requests first; what completes goes to `ready`, run
  // after the lock is released.
  void Flush(std::vector<std::function<void()>>* ready) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (bool progress = true; progress;) {
      progress = false;
      while (!enqueues_.empty()) {
        EnqueueRequest& e = enqueues_.front();
        while (!e.elements.empty() &&
               (capacity_ < 0 || static_cast<int64_t>(queue_.size()) < capacity_)) {
          queue_.push_back(std::move(e.elements.front()));
          e.elements.pop_front();
          progress = true;
        }
        if (!e.elements.empty()) break;
        ready->push_back([f = std::move(e.done)] { f(absl::OkStatus()); });
        enqueues_.pop_front();
      }
      while (!dequeues_.empty()) {
        DequeueRequest& d = dequeues_.front();
        while (static_cast<int64_t>(d.taken.size()) < d.n && !queue_.empty()) {
          d.taken.push_back(std::move(queue_.front()));
          queue_.pop_front();
          progress = true;
        }
        if (static_cast<int64_t>(d.taken.size()) < d.n) {
          if (!closed_ && enqueues_.empty() && !lost_.ok()) {  // nothing will come
            Restore(&d);
            ready->push_back([f = std::move(d.done), s = lost_] { f(s, {}); });
            dequeues_.pop_front();
            continue;
          }
          if (!closed_ || !enqueues_.empty()) break;  // more may come
          if (!(d.up_to && !d.taken.empty())) {
            Restore(&d);
            ready->push_back([f = std::move(d.done), n = d.n,
                              have = static_cast<int64_t>(queue_.size()), name = name_] {
              f(absl::OutOfRangeError(absl::StrCat("FIFOQueue '", name,
                                                   "' is closed and has insufficient elements "
                                                   "(requested ",
                                                   n, ", current size ", have, ")")),
                {});
            });
            dequeues_.pop_front();
            continue;
          }
        }
        ready->push_back([f = std::move(d.done), got = std::move(d.taken)]() mutable {
          f(absl::OkStatus(), std::move(got));
        });
        dequeues_.pop_front();
        progress = true;
      }
    }
  }

  const std::string name_;
  const std::vector<DataType> types_;
  const std::vector<PartialShape> shapes_;
  const int64_t capacity_;
  mutable absl::Mutex mu_;
  std::deque<Tuple> queue_ ABSL_GUARDED_BY(mu_);
  std::deque<EnqueueRequest> enqueues_ ABSL_GUARDED_BY(mu_);
  std::deque<DequeueRequest> dequeues_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_set<std::string> fillers_ ABSL_GUARDED_BY(mu_);
  absl::Status lost_ ABSL_GUARDED_BY(mu_);  // set while its last filler is lost
  absl::flat_hash_set<int64_t> cancelled_ids_ ABSL_GUARDED_BY(mu_);
};

class FifoQueueOp : public OpKernel {
 public:
  explicit FifoQueueOp(OpKernelConstruction* c) : OpKernel(c), resource_(c) {
    OP_REQUIRES_OK(c, c->GetAttr("component_types", &types_));
    OP_REQUIRES_OK(c, c->GetAttr("capacity", &capacity_));
    auto shapes = c->def().attr().find("shapes");
    if (shapes != c->def().attr().end()) {
      for (const TensorShapeProto& proto : shapes->second.list().shape()) {
        absl::StatusOr<PartialShape> shape = PartialShape::FromProto(proto);
        OP_REQUIRES_OK(c, shape.status());
        shapes_.push_back(*std::move(shape));
      }
    }
    OP_REQUIRES(c, shapes_.empty() || shapes_.size() == types_.size(),
                absl::InvalidArgumentError(absl::StrCat(
                    "Shapes attr has ", shapes_.size(), " entries for ", types_.size(),
                    " component types")));
    if (capacity_ < 0) capacity_ = -1;
    set_expensive(false);
  }

  void Compute(OpKernelContext* ctx) override {
    auto make = [this](const std::string& name) -> absl::StatusOr<std::shared_ptr<FifoQueue>> {
      return std::make_shared<FifoQueue>(name, types_, shapes_, capacity_);
    };
    Tensor handle;
    absl::StatusOr<std::shared_ptr<FifoQueue>> queue = resource_.Get(ctx, make, &handle);
    OP_REQUIRES_OK(ctx, queue.status());
    const FifoQueue& q = **queue;
    OP_REQUIRES(ctx, q.types() == types_ && q.capacity() == capacity_ && q.shapes() == shapes_,
                absl::InvalidArgumentError(absl::StrCat(
                    "Shared queue '", q.name(),
                    "' has other component types, shapes or capacity than this node asks for")));
    ctx->set_output(0, handle);
  }

 private:
  std::vector<DataType> types_;
  std::vector<PartialShape> shapes_;
  int64_t capacity_ = -1;
  SharedResource<FifoQueue> resource_;
};

class EnqueueOp : public AsyncOpKernel {
 public:
  explicit EnqueueOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    many_ = type_string() == "QueueEnqueueManyV2";
    set_expensive(false);
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<FifoQueue*> queue = ObjectOf<FifoQueue>(ctx->input(0), "a queue");
    OP_REQUIRES_OK_ASYNC(ctx, queue.status(), done);
    Tuple t;
    for (int i = 1; i < ctx->num_inputs(); ++i) t.push_back(ctx->input(i));
    OP_REQUIRES_OK_ASYNC(ctx, (*queue)->Validate(t, many_), done);
    if (many_ && t[0].dim_size(0) == 0) {  // nothing to queue: done at once
      done();
      return;
    }
    std::deque<Tuple> elements;
    if (!many_) {
      elements.push_back(std::move(t));
    } else {
      for (int64_t k = 0; k < t[0].dim_size(0); ++k) {
        Tuple e;
        for (const Tensor& c : t) {
          TensorShape rest;
          for (int d = 1; d < c.dims(); ++d) rest.AddDim(c.dim_size(d));
          absl::StatusOr<Tensor> row = c.Slice(k, k + 1).Reshaped(rest);
          OP_REQUIRES_OK_ASYNC(ctx, row.status(), done);
          e.push_back(*std::move(row));
        }
        elements.push_back(std::move(e));
      }
    }
    (*queue)->Enqueue(std::move(elements), ctx->cancellation(), ctx->params().session_handle,
                      [ctx, done](const absl::Status& s) {
                        if (!s.ok()) ctx->SetStatus(s);
                        done();
                      });
  }

 private:
  bool many_ = false;
};

class DequeueOp : public AsyncOpKernel {
 public:
  explicit DequeueOp(OpKernelConstruction* c) : AsyncOpKernel(c) {
    many_ = type_string() != "QueueDequeueV2";
    up_to_ = type_string() == "QueueDequeueUpToV2";
    set_expensive(false);
  }

  void ComputeAsync(OpKernelContext* ctx, DoneCallback done) override {
    absl::StatusOr<FifoQueue*> found = ObjectOf<FifoQueue>(ctx->input(0), "a queue");
    OP_REQUIRES_OK_ASYNC(ctx, found.status(), done);
    FifoQueue* queue = *found;
    // The node's component types must be the queue's (TensorFlow's
    // signature check): the outputs are made for them.
    bool types_match = static_cast<int>(queue->types().size()) == num_outputs();
    for (int i = 0; types_match && i < num_outputs(); ++i) {
      types_match = queue->types()[i] == ctx->expected_output_dtype(i);
    }
    OP_REQUIRES_ASYNC(ctx, types_match,
                      absl::InvalidArgumentError(absl::StrCat(
                          "FIFOQueue '", queue->name(),
                          "' holds components of other types than this dequeue's")),
                      done);
    int64_t n = 1;
    if (many_) {
      const Tensor& count = ctx->input(1);
      OP_REQUIRES_ASYNC(ctx, count.dtype() == DT_INT32 && count.dims() == 0,
                        absl::InvalidArgumentError(absl::StrCat(
                            "n must be scalar, but had shape ", count.shape().DebugString())),
                        done);
      n = count.flat<int32_t>()[0];
      OP_REQUIRES_ASYNC(ctx, n >= 0,
                        absl::InvalidArgumentError(absl::StrCat(
                            "DequeueManyOp requested ", n, " < 0 elements")),
                        done);
      bool shapes_known = queue->shapes().size() == queue->types().size();
      for (const PartialShape& s : queue->shapes()) shapes_known &= s.IsFullyDefined();
      OP_REQUIRES_ASYNC(ctx, shapes_known,
                        absl::InvalidArgumentError(absl::StrCat(
                            "FIFOQueue '", queue->name(),
                            "': DequeueMany and DequeueUpTo require the components to have "
                            "specified shapes.")),
                        done);
      if (n == 0) {  // empty batches at once, the queue untouched
        ctx->SetStatus(Batch(ctx, *queue, {}));
        done();
        return;
      }
    }
    const bool many = many_;
    queue->Dequeue(n, many, up_to_, ctx->cancellation(),
                   [ctx, done, many, queue](const absl::Status& s, std::vector<Tuple> got) {
                     if (!s.ok()) {
                       ctx->SetStatus(s);
                     } else if (!many) {
                       for (size_t i = 0; i < got[0].size(); ++i) ctx->set_output(i, got[0][i]);
                     } else {
                       ctx->SetStatus(Batch(ctx, *queue, got));
                     }
                     done();
                   });
  }

 private:
  // Outputs each component of `got` stacked along a new dimension 0.
  static absl::Status Batch(OpKernelContext* ctx, const FifoQueue& queue,
                            const std::vector<Tuple>& got) {
    for (size_t i = 0; i < queue.types().size(); ++i) {
      TensorShape shape({static_cast<int64_t>(got.size())});
      absl::StatusOr<TensorShape> element = TensorShape::FromDims(queue.shapes()[i].dims());
      if (!element.ok()) return element.status();
      for (int64_t d : element->dim_sizes()) GR_RETURN_IF_ERROR(shape.AddDimWithStatus(d));
      Tensor* out = nullptr;
      GR_RETURN_IF_ERROR(ctx->allocate_output(static_cast<int>(i), shape, &out));
      const int64_t each = element->num_elements();
      for (size_t k = 0; k < got.size(); ++k) {
        CopyElements(got[k][i], 0, each, out, static_cast<int64_t>(k) * each);
      }
    }
    return absl::OkStatus();
  }

  bool many_ = false, up_to_ = false;
};

class QueueCloseOp : public OpKernel {
 public:
  explicit QueueCloseOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("cancel_pending_enqueues", &cancel_pending_enqueues_));
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<FifoQueue*> queue = ObjectOf<FifoQueue>(ctx->input(0), "a queue");
    OP_REQUIRES_OK(ctx, queue.status());
    OP_REQUIRES_OK(ctx, (*queue)->Close(cancel_pending_enqueues_));
  }

 private:
  bool cancel_pending_enqueues_ = false;
};

class QueueStateOp : public OpKernel {
 public:
  explicit QueueStateOp(OpKernelConstruction* c) : OpKernel(c) {
    size_ = type_string() == "QueueSizeV2";
    set_expensive(false);
  }
  void Compute(OpKernelContext* ctx) override {
    absl::StatusOr<FifoQueue*> queue = ObjectOf<FifoQueue>(ctx->input(0), "a queue");
    OP_REQUIRES_OK(ctx, queue.status());
    if (size_) {
      ctx->set_output(0, Tensor::Scalar<int32_t>(static_cast<int32_t>((*queue)->Size())));
    } else {
      ctx->set_output(0, Tensor::Scalar<bool>((*queue)->IsClosed()));
    }
  }

 private:
  bool size_ = false;
};

REGISTER_KERNEL(KernelDefBuilder("FIFOQueueV2").Device(kDeviceCpu), FifoQueueOp);
REGISTER_KERNEL(KernelDefBuilder("QueueEnqueueV2").Device(kDeviceCpu), EnqueueOp);
REGISTER_KERNEL(KernelDefBuilder("QueueEnqueueManyV2").Device(kDeviceCpu), EnqueueOp);
REGISTER_KERNEL(KernelDefBuilder("QueueDequeueV2").Device(kDeviceCpu), DequeueOp);
REGISTER_KERNEL(KernelDefBuilder("QueueDequeueManyV2").Device(kDeviceCpu), DequeueOp);
REGISTER_KERNEL(KernelDefBuilder("QueueDequeueUpToV2").Device(kDeviceCpu), DequeueOp);
REGISTER_KERNEL(KernelDefBuilder("QueueCloseV2").Device(kDeviceCpu), QueueCloseOp);
REGISTER_KERNEL(KernelDefBuilder("QueueSizeV2").Device(kDeviceCpu), QueueStateOp);
REGISTER_KERNEL(KernelDefBuilder("QueueIsClosedV2").Device(kDeviceCpu), QueueStateOp);

}  // namespace
}  // namespace graphrun
