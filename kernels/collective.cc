#include "kernels/collective.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace graphrun {

const char* CollectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kReduce:
      return "reduce";
    case CollectiveKind::kGather:
      return "gather";
    case CollectiveKind::kBcastSend:
      return "broadcast send";
    case CollectiveKind::kBcastRecv:
      return "broadcast receive";
  }
  return "collective";
}

std::string CollectiveCall::Describe() const {
  return absl::StrCat("node '", node, "' (", CollectiveKindName(kind), " of group ", group_key,
                      ", instance ", instance_key, ", execution ", execution, ", on ", device,
                      ")");
}

namespace {

bool IsBroadcast(CollectiveKind k) {
  return k == CollectiveKind::kBcastSend || k == CollectiveKind::kBcastRecv;
}

absl::Status Disagree(const CollectiveCall& a, const CollectiveCall& b, absl::string_view what,
                      const std::string& va, const std::string& vb) {
  return absl::InvalidArgumentError(absl::StrCat("members of one collective instance disagree on ",
                                                 what, ": ", a.Describe(), " has ", va, ", ",
                                                 b.Describe(), " has ", vb));
}

template <typename T>
void Merge(const std::string& op, const T* in, T* acc, int64_t n) {
  if (op == "Add") {
    for (int64_t i = 0; i < n; ++i) acc[i] += in[i];
  } else if (op == "Mul") {
    for (int64_t i = 0; i < n; ++i) acc[i] *= in[i];
  } else if (op == "Min") {
    for (int64_t i = 0; i < n; ++i) acc[i] = std::min(acc[i], in[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) acc[i] = std::max(acc[i], in[i]);
  }
}

template <typename T>
void Reduce(const CollectiveCall& call, const std::vector<Tensor>& by_rank, Tensor* out) {
  const int64_t n = out->NumElements();
  T* acc = out->flat<T>().data();
  std::memcpy(acc, by_rank[0].flat<T>().data(), sizeof(T) * static_cast<size_t>(n));
  for (size_t r = 1; r < by_rank.size(); ++r) {
    Merge<T>(call.merge_op, by_rank[r].flat<T>().data(), acc, n);
  }
  if (call.final_op == "Div") {
    const T size = static_cast<T>(by_rank.size());
    for (int64_t i = 0; i < n; ++i) acc[i] = acc[i] / size;
  }
}

}  // namespace

absl::Status CheckCollectiveMembers(const std::vector<const CollectiveCall*>& members) {
  if (members.empty()) return absl::OkStatus();
  const CollectiveCall& first = *members[0];
  int senders = first.kind == CollectiveKind::kBcastSend ? 1 : 0;
  for (size_t i = 1; i < members.size(); ++i) {
    const CollectiveCall& m = *members[i];
    if (IsBroadcast(first.kind) != IsBroadcast(m.kind) ||
        (!IsBroadcast(m.kind) && m.kind != first.kind)) {
      return Disagree(first, m, "the operation", CollectiveKindName(first.kind),
                      CollectiveKindName(m.kind));
    }
    if (m.dtype != first.dtype) {
      return Disagree(first, m, "the type", DataTypeString(first.dtype),
                      DataTypeString(m.dtype));
    }
    if (m.group_size != first.group_size) {
      return Disagree(first, m, "the group size", absl::StrCat(first.group_size),
                      absl::StrCat(m.group_size));
    }
    if (m.kind == CollectiveKind::kReduce &&
        (m.merge_op != first.merge_op || m.final_op != first.final_op)) {
      return Disagree(first, m, "merge and final ops",
                      absl::StrCat(first.merge_op, "/", first.final_op),
                      absl::StrCat(m.merge_op, "/", m.final_op));
    }
    if (m.kind == CollectiveKind::kBcastSend && ++senders > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("a broadcast has two senders: ", first.Describe(), " and ", m.Describe()));
    }
  }
  if (IsBroadcast(first.kind) && senders == 0 &&
      static_cast<int64_t>(members.size()) == first.group_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("a broadcast has no sender: ", first.Describe(), " and ",
                     members.size() - 1, " more receive"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Tensor> CombineCollective(const CollectiveCall& call,
                                         const std::vector<Tensor>& by_rank) {
  if (by_rank.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(call.Describe(), ": no member's input"));
  }
  const Tensor& first = by_rank[0];
  if (call.kind == CollectiveKind::kReduce) {
    for (size_t r = 1; r < by_rank.size(); ++r) {
      if (by_rank[r].shape() != first.shape()) {
        return absl::InvalidArgumentError(absl::StrCat(
            call.Describe(), ": the members' inputs differ in shape: rank 0 has ",
            first.shape().DebugString(), ", rank ", r, " has ", by_rank[r].shape().DebugString()));
      }
    }
    Tensor out(first.dtype(), first.shape());
    switch (first.dtype()) {
      case DT_FLOAT:
        Reduce<float>(call, by_rank, &out);
        break;
      case DT_DOUBLE:
        Reduce<double>(call, by_rank, &out);
        break;
      case DT_INT32:
        Reduce<int32_t>(call, by_rank, &out);
        break;
      case DT_INT64:
        Reduce<int64_t>(call, by_rank, &out);
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat(
            call.Describe(), ": a reduce of ", DataTypeString(first.dtype()),
            " between clients is not supported (float, double, int32, int64 are)"));
    }
    return out;
  }
  if (call.kind != CollectiveKind::kGather) {
    return absl::InternalError(absl::StrCat(call.Describe(), ": not a reduce or gather"));
  }
  const int elem = DataTypeSize(first.dtype());
  if (elem <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        call.Describe(), ": a gather of ", DataTypeString(first.dtype()), " is not supported"));
  }
  int64_t rows = 0;
  for (size_t r = 0; r < by_rank.size(); ++r) {
    const TensorShape& s = by_rank[r].shape();
    bool fits = s.dims() >= 1 && s.dims() == first.dims();
    for (int d = 1; fits && d < s.dims(); ++d) fits = s.dim_size(d) == first.shape().dim_size(d);
    if (!fits) {
      return absl::InvalidArgumentError(absl::StrCat(
          call.Describe(), ": gathered inputs must have rank >= 1 and the same dimensions ",
          "after the first: rank 0 has ", first.shape().DebugString(), ", rank ", r, " has ",
          s.DebugString()));
    }
    rows += s.dim_size(0);
  }
  TensorShape shape = first.shape();
  shape.set_dim(0, rows);
  Tensor out(first.dtype(), shape);
  char* dst = static_cast<char*>(out.raw_data());
  for (const Tensor& t : by_rank) {
    const size_t bytes = static_cast<size_t>(t.NumElements()) * static_cast<size_t>(elem);
    if (bytes > 0) std::memcpy(dst, t.raw_data(), bytes);
    dst += bytes;
  }
  return out;
}

}  // namespace graphrun
