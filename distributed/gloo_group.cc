#include "distributed/gloo_group.h"

#include <chrono>
#include <exception>
#include <map>

#include "absl/strings/str_cat.h"
#include "gloo/allreduce.h"
#include "gloo/common/error.h"
#include "gloo/math.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/store.h"
#include "gloo/transport/tcp/device.h"

namespace graphrun {
namespace {

// gloo's rendezvous store over the collective meeting: each set() is one
// exchange among the ranks; get() and wait() read what the exchanges
// brought.
class MeetingStore : public gloo::rendezvous::Store {
 public:
  explicit MeetingStore(GlooGroup::Exchange exchange) : exchange_(std::move(exchange)) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    absl::StatusOr<std::vector<std::pair<std::string, std::string>>> all =
        exchange_(key, std::string(data.begin(), data.end()));
    if (!all.ok()) throw std::runtime_error(std::string(all.status().message()));
    for (auto& [k, v] : *all) values_[k] = std::move(v);
  }
  std::vector<char> get(const std::string& key) override {
    auto it = values_.find(key);
    if (it == values_.end()) throw std::runtime_error("gloo store: no key " + key);
    return std::vector<char>(it->second.begin(), it->second.end());
  }
  void wait(const std::vector<std::string>& keys) override {
    for (const std::string& k : keys) {
      if (values_.find(k) == values_.end()) {
        throw std::runtime_error("gloo store: a rank wrote no key " + k);
      }
    }
  }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) override {
    wait(keys);
  }

 private:
  GlooGroup::Exchange exchange_;
  std::map<std::string, std::string> values_;
};

template <typename T>
void Sum(void* c, const void* a, const void* b, size_t n) {
  T* out = static_cast<T*>(c);
  const T* x = static_cast<const T*>(a);
  const T* y = static_cast<const T*>(b);
  for (size_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
}

template <typename T>
void Run(const std::shared_ptr<gloo::Context>& context, void* data, int64_t count) {
  gloo::AllreduceOptions opts(context);
  opts.setOutput(static_cast<T*>(data), static_cast<size_t>(count));
  opts.setReduceFunction(&Sum<T>);
  opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
  gloo::allreduce(opts);
}

}  // namespace

GlooGroup::GlooGroup(std::shared_ptr<gloo::Context> context) : context_(std::move(context)) {}
GlooGroup::~GlooGroup() = default;

absl::StatusOr<std::unique_ptr<GlooGroup>> GlooGroup::Connect(int rank, int size,
                                                              const std::string& host,
                                                              Exchange exchange,
                                                              absl::Duration connect_timeout,
                                                              absl::Duration timeout) {
  try {
    gloo::transport::tcp::attr attr(host.c_str());
    std::shared_ptr<gloo::transport::Device> device = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(std::chrono::milliseconds(absl::ToInt64Milliseconds(connect_timeout)));
    MeetingStore store(std::move(exchange));
    context->connectFullMesh(store, device);
    context->setTimeout(std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout)));
    return std::unique_ptr<GlooGroup>(new GlooGroup(std::move(context)));
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("gloo: connecting rank ", rank, " of ", size,
                                               " on ", host, ": ", e.what()));
  }
}

int GlooGroup::size() const { return context_->size; }

absl::Status GlooGroup::Allreduce(void* data, int64_t count, DataType dtype) {
  if (count == 0) return absl::OkStatus();
  try {
    switch (dtype) {
      case DT_FLOAT:
        Run<float>(context_, data, count);
        break;
      case DT_DOUBLE:
        Run<double>(context_, data, count);
        break;
      case DT_INT32:
        Run<int32_t>(context_, data, count);
        break;
      case DT_INT64:
        Run<int64_t>(context_, data, count);
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("gloo: an allreduce of ", DataTypeString(dtype), " is not supported"));
    }
  } catch (const gloo::IoException& e) {
    return absl::UnavailableError(absl::StrCat("gloo: ", e.what()));
  } catch (const std::exception& e) {
    const std::string what = e.what();
    if (what.find("imeout") != std::string::npos) {
      return absl::DeadlineExceededError(absl::StrCat("gloo: ", what));
    }
    return absl::UnavailableError(absl::StrCat("gloo: ", what));
  }
  return absl::OkStatus();
}

}  // namespace graphrun
