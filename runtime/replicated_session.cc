#include "runtime/replicated_session.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

std::string NodeOf(const std::string& tensor) {
  std::string node = tensor[0] == '^' ? tensor.substr(1) : tensor;
  const size_t colon = node.rfind(':');
  if (colon != std::string::npos) node.resize(colon);
  return node;
}

// [n, ...] from n tensors of one dtype and shape.
absl::StatusOr<Tensor> StackReplicas(const std::vector<Tensor>& parts, const std::string& fetch) {
  const Tensor& first = parts.front();
  TensorShape shape({static_cast<int64_t>(parts.size())});
  for (int d = 0; d < first.dims(); ++d) shape.AddDim(first.dim_size(d));
  Tensor out(first.dtype(), shape);
  const size_t bytes = first.TotalBytes();
  for (size_t r = 0; r < parts.size(); ++r) {
    if (parts[r].dtype() != first.dtype() || parts[r].shape() != first.shape()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fetch ", fetch, " has shape ", first.shape().DebugString(), " on replica 0 and ",
          parts[r].shape().DebugString(), " on replica ", r, "; it cannot be stacked"));
    }
    if (first.dtype() == DT_STRING) {
      for (int64_t k = 0; k < first.NumElements(); ++k) {
        out.flat<std::string>()[r * first.NumElements() + k] = parts[r].flat<std::string>()[k];
      }
    } else if (bytes > 0) {
      std::memcpy(static_cast<char*>(out.raw_data()) + r * bytes, parts[r].raw_data(), bytes);
    }
  }
  return out;
}

Tensor MeanOfScalars(const std::vector<Tensor>& parts) {
  double sum = 0;
  for (const Tensor& t : parts) {
    sum += t.dtype() == DT_DOUBLE ? t.flat<double>()[0] : t.flat<float>()[0];
  }
  const double mean = sum / parts.size();
  return parts.front().dtype() == DT_DOUBLE ? Tensor::Scalar<double>(mean)
                                            : Tensor::Scalar<float>(static_cast<float>(mean));
}

// The first element where a and b differ, as text.
std::string FirstDifference(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    return absl::StrCat(a.shape().DebugString(), " vs ", b.shape().DebugString());
  }
  const int64_t size = DataTypeSize(a.dtype());
  const char* pa = static_cast<const char*>(a.raw_data());
  const char* pb = static_cast<const char*>(b.raw_data());
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    if (std::memcmp(pa + i * size, pb + i * size, size) == 0) continue;
    if (a.dtype() == DT_FLOAT) {
      return absl::StrCat("element ", i, ": ", a.flat<float>()[i], " vs ", b.flat<float>()[i]);
    }
    if (a.dtype() == DT_DOUBLE) {
      return absl::StrCat("element ", i, ": ", a.flat<double>()[i], " vs ", b.flat<double>()[i]);
    }
    return absl::StrCat("element ", i);
  }
  return "";
}

}  // namespace

ReplicatedSession::ReplicatedSession(ReplicatedGraph graph, std::unique_ptr<Session> inner,
                                     bool fetch_all_replicas)
    : graph_(std::move(graph)), inner_(std::move(inner)),
      fetch_all_replicas_(fetch_all_replicas) {}

bool ReplicatedSession::Replicated(const std::string& tensor_or_node) const {
  return graph_.replicas > 1 && graph_.replicated.contains(NodeOf(tensor_or_node));
}

absl::Status ReplicatedSession::Run(const RunOptions& options,
                                    const std::vector<std::pair<std::string, Tensor>>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets,
                                    std::vector<Tensor>* outputs, RunMetadata* metadata) {
  const int n = graph_.replicas;
  std::vector<std::pair<std::string, Tensor>> in;
  for (const auto& [name, t] : feeds) {
    if (!Replicated(name)) {
      in.emplace_back(name, t);
      continue;
    }
    if (t.dims() == 0) {
      for (int r = 0; r < n; ++r) in.emplace_back(graph_.TensorName(name, r), t);
      continue;
    }
    const int64_t rows = t.dim_size(0);
    if (rows % n != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "feed ", name, " has ", rows, " rows along its first axis (shape ",
          t.shape().DebugString(), "), which ", n, " replicas cannot split evenly"));
    }
    const int64_t each = rows / n;
    for (int r = 0; r < n; ++r) {
      in.emplace_back(graph_.TensorName(name, r), t.Slice(r * each, (r + 1) * each));
    }
  }
  std::vector<std::string> out_names;
  std::vector<std::pair<size_t, int>> where;  // first inner fetch, how many
  for (const std::string& f : fetches) {
    where.emplace_back(out_names.size(), Replicated(f) ? n : 1);
    for (int r = 0; r < where.back().second; ++r) out_names.push_back(graph_.TensorName(f, r));
  }
  std::vector<std::string> run_targets;
  for (const std::string& t : targets) {
    for (int r = 0; r < (Replicated(t) ? n : 1); ++r) run_targets.push_back(graph_.NodeName(t, r));
  }
  std::vector<Tensor> got;
  GR_RETURN_IF_ERROR(inner_->Run(options, in, out_names, run_targets, &got, metadata));
  outputs->clear();
  for (size_t i = 0; i < fetches.size(); ++i) {
    const auto [first, count] = where[i];
    if (count == 1) {
      outputs->push_back(got[first]);
      continue;
    }
    std::vector<Tensor> parts(got.begin() + first, got.begin() + first + count);
    const Tensor& t0 = parts.front();
    if (fetch_all_replicas_) {
      GR_ASSIGN_OR_RETURN(Tensor stacked, StackReplicas(parts, fetches[i]));
      outputs->push_back(std::move(stacked));
    } else if (t0.dims() == 0 && (t0.dtype() == DT_FLOAT || t0.dtype() == DT_DOUBLE)) {
      outputs->push_back(MeanOfScalars(parts));
    } else {
      outputs->push_back(t0);
    }
  }
  return absl::OkStatus();
}

absl::Status ReplicatedSession::Broadcast() {
  if (graph_.replicas < 2) return absl::OkStatus();
  std::vector<Tensor> unused;
  absl::Status s = inner_->Run({}, {}, {graph_.broadcast_op}, &unused);
  if (!s.ok()) {
    return absl::Status(s.code(), absl::StrCat("copying replica 0's variables to the other ",
                                               graph_.replicas - 1, " replica(s): ", s.message()));
  }
  return absl::OkStatus();
}

absl::Status ReplicatedSession::CheckReplicasEqual() {
  if (graph_.replicas < 2) return absl::OkStatus();
  std::vector<std::string> reads;
  for (const ReplicatedVariable& v : graph_.variables) {
    reads.insert(reads.end(), v.reads.begin(), v.reads.end());
  }
  std::vector<Tensor> got;
  GR_RETURN_IF_ERROR(inner_->Run({}, reads, {}, &got));
  size_t at = 0;
  for (const ReplicatedVariable& v : graph_.variables) {
    const Tensor& first = got[at];
    for (int r = 1; r < graph_.replicas; ++r) {
      const Tensor& other = got[at + r];
      const std::string diff = first.dtype() == DT_STRING ? "" : FirstDifference(first, other);
      if (!diff.empty()) {
        return absl::InternalError(absl::StrCat("variable ", v.name, " differs between replica 0 and replica ",
                                                r, ": ", diff));
      }
    }
    at += graph_.replicas;
  }
  return absl::OkStatus();
}

}  // namespace graphrun
