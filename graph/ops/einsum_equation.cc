#include "graph/ops/einsum_equation.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace graphrun {
namespace {

constexpr int kNumLetters = 52;

absl::Status EquationError(absl::string_view equation,
                           absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "Einsum: attr 'equation' \"", equation, "\": ", what));
}

int LetterLabel(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return kEllipsisLabel - 1;  // not a label
}

// One subscript ("ab...c") into labels.
absl::StatusOr<std::vector<int>> ParseSubscript(absl::string_view equation,
                                                absl::string_view subscript) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = 0; i < subscript.size(); ++i) {
    const char c = subscript[i];
    if (c == '.') {
      if (subscript.substr(i, 3) != "...") {
        return EquationError(equation,
                             absl::StrCat("subscript '", subscript,
                                          "' has a '.' that is not part of "
                                          "an ellipsis (...)"));
      }
      if (ellipsis) {
        return EquationError(equation,
                             absl::StrCat("subscript '", subscript,
                                          "' has more than one ellipsis"));
      }
      ellipsis = true;
      labels.push_back(kEllipsisLabel);
      i += 2;
      continue;
    }
    const int label = LetterLabel(c);
    if (label < 0) {
      return EquationError(
          equation, absl::StrCat("subscript '", subscript, "' has '",
                                 std::string(1, c),
                                 "': labels must be letters (a-z, A-Z)"));
    }
    labels.push_back(label);
  }
  return labels;
}

// Merges the sizes of one broadcast dim (NumPy rules, -1 unknown).
bool BroadcastDim(int64_t a, int64_t b, int64_t* out) {
  if (a == 1) {
    *out = b;
  } else if (b == 1) {
    *out = a;
  } else if (a == -1) {
    *out = b;
  } else if (b == -1 || a == b) {
    *out = a;
  } else {
    return false;
  }
  return true;
}

std::string DimsString(const std::vector<int64_t>& dims) {
  std::vector<std::string> parts;
  for (int64_t d : dims) parts.push_back(d < 0 ? "?" : absl::StrCat(d));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

}  // namespace

std::string EinsumLabelName(int label) {
  if (label >= kFirstBroadcastLabel) {
    return absl::StrCat("...[", label - kFirstBroadcastLabel, "]");
  }
  if (label >= 26) return std::string(1, static_cast<char>('A' + label - 26));
  if (label >= 0) return std::string(1, static_cast<char>('a' + label));
  return "...";
}

absl::StatusOr<EinsumEquation> ParseEinsumEquation(absl::string_view equation,
                                                   int num_inputs) {
  std::vector<absl::string_view> sides = absl::StrSplit(equation, "->");
  if (sides.size() != 2) {
    return EquationError(equation, "expecting exactly one '->'");
  }
  std::vector<absl::string_view> ins = absl::StrSplit(sides[0], ',');
  if (ins.size() != 1 && ins.size() != 2) {
    return EquationError(equation,
                         absl::StrCat("expecting 1 or 2 input subscripts, got ",
                                      ins.size()));
  }
  if (static_cast<int>(ins.size()) != num_inputs) {
    return EquationError(
        equation, absl::StrCat("has ", ins.size(),
                               " input subscripts but the node has ",
                               num_inputs, " inputs (attr 'N')"));
  }
  EinsumEquation eq;
  eq.equation = std::string(equation);
  std::vector<bool> seen(kNumLetters, false);
  for (absl::string_view in : ins) {
    auto labels = ParseSubscript(equation, in);
    if (!labels.ok()) return labels.status();
    for (int l : *labels) {
      if (l >= 0) seen[l] = true;
    }
    eq.inputs.push_back(*std::move(labels));
  }
  auto out = ParseSubscript(equation, sides[1]);
  if (!out.ok()) return out.status();
  std::vector<bool> in_output(kNumLetters, false);
  for (int l : *out) {
    if (l < 0) continue;
    if (!seen[l]) {
      return EquationError(
          equation, absl::StrCat("output label '", EinsumLabelName(l),
                                 "' appears in no input"));
    }
    if (in_output[l]) {
      return EquationError(
          equation, absl::StrCat("output label '", EinsumLabelName(l),
                                 "' is repeated (not supported)"));
    }
    in_output[l] = true;
  }
  eq.output = *std::move(out);
  return eq;
}

std::vector<int64_t> EinsumDims::OutputDims() const {
  std::vector<int64_t> dims;
  dims.reserve(output.size());
  for (int l : output) dims.push_back(label_sizes[l]);
  return dims;
}

absl::StatusOr<EinsumDims> ResolveEinsum(
    const EinsumEquation& eq, const std::vector<std::vector<int64_t>>& dims) {
  if (dims.size() != eq.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Einsum: equation \"", eq.equation, "\" has ",
                     eq.inputs.size(), " inputs, got ", dims.size()));
  }
  EinsumDims r;
  // Ellipsis dims of each input.
  std::vector<int> ellipsis_dims(dims.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    const std::vector<int>& labels = eq.inputs[i];
    const bool has_ellipsis =
        std::find(labels.begin(), labels.end(), kEllipsisLabel) != labels.end();
    const int named = static_cast<int>(labels.size()) - (has_ellipsis ? 1 : 0);
    const int rank = static_cast<int>(dims[i].size());
    if (!has_ellipsis && rank != named) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Einsum: expected input ", i, " to have rank ", named, " but got ",
          rank, " (shape ", DimsString(dims[i]), ", equation \"", eq.equation,
          "\")"));
    }
    if (has_ellipsis && rank < named) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Einsum: expected input ", i, " to have rank at least ", named,
          " but got ", rank, " (shape ", DimsString(dims[i]),
          ", equation \"", eq.equation, "\")"));
    }
    ellipsis_dims[i] = rank - named;
    r.num_broadcast = std::max(r.num_broadcast, ellipsis_dims[i]);
  }
  r.label_sizes.assign(kFirstBroadcastLabel + r.num_broadcast, -1);
  std::vector<bool> broadcast_seen(r.num_broadcast, false);
  std::vector<bool> letter_seen(kNumLetters, false);
  for (size_t i = 0; i < dims.size(); ++i) {
    std::vector<int> labels;
    for (int l : eq.inputs[i]) {
      if (l != kEllipsisLabel) {
        labels.push_back(l);
        continue;
      }
      for (int j = 0; j < ellipsis_dims[i]; ++j) {
        labels.push_back(kFirstBroadcastLabel + r.num_broadcast -
                         ellipsis_dims[i] + j);
      }
    }
    for (size_t axis = 0; axis < labels.size(); ++axis) {
      const int l = labels[axis];
      const int64_t d = dims[i][axis];
      int64_t& size = r.label_sizes[l];
      if (l >= kFirstBroadcastLabel) {
        const int b = l - kFirstBroadcastLabel;
        int64_t merged = d;
        if (broadcast_seen[b] && !BroadcastDim(size, d, &merged)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "Einsum: the ellipsis (...) dims of the inputs do not "
              "broadcast: ",
              size, " vs ", d, " at axis ", axis, " of input ", i, " (shape ",
              DimsString(dims[i]), ", equation \"", eq.equation, "\")"));
        }
        broadcast_seen[b] = true;
        size = merged;
        continue;
      }
      if (!letter_seen[l] || size == -1) {
        size = d;
      } else if (d != -1 && d != size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Einsum: label '", EinsumLabelName(l), "' is dimension ", size,
            " in one place but dimension ", d, " at axis ", axis,
            " of input ", i, " (shape ", DimsString(dims[i]), ", equation \"",
            eq.equation, "\")"));
      }
      letter_seen[l] = true;
    }
    r.inputs.push_back(std::move(labels));
  }
  const bool output_ellipsis =
      std::find(eq.output.begin(), eq.output.end(), kEllipsisLabel) !=
      eq.output.end();
  if (!output_ellipsis && r.num_broadcast > 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Einsum: the inputs have ", r.num_broadcast,
        " broadcasting (...) dim(s) but the output subscripts of attr "
        "'equation' \"",
        eq.equation, "\" have no ellipsis"));
  }
  for (int l : eq.output) {
    if (l != kEllipsisLabel) {
      r.output.push_back(l);
      continue;
    }
    for (int j = 0; j < r.num_broadcast; ++j) {
      r.output.push_back(kFirstBroadcastLabel + j);
    }
  }
  return r;
}

}  // namespace graphrun
