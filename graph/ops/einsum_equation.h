// Einsum equations as TensorFlow's Einsum op reads them: one or two input
// subscripts and an output subscript ("abc,cd->abd", "...ij,...jk->...ik").
// Labels are letters; "..." stands for broadcasting dims (right-aligned
// across inputs, NumPy rules). A label repeated within one input takes the
// diagonal; a label missing from the output is summed over. Shared by the
// Einsum shape function and its CPU kernel so both accept and reject the
// same equations. Stateless; thread-safe.
//
//   auto eq = ParseEinsumEquation("abc,cd->abd", 2);
//   auto dims = ResolveEinsum(*eq, {{2, 3, 4}, {4, 5}});
//   dims->OutputDims();  // {2, 3, 5}
#ifndef GRAPHRUN_GRAPH_OPS_EINSUM_EQUATION_H_
#define GRAPHRUN_GRAPH_OPS_EINSUM_EQUATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphrun {

// Label ids: 'a'-'z' are 0-25, 'A'-'Z' 26-51; dim i of the broadcast
// (ellipsis) dims is kFirstBroadcastLabel + i.
inline constexpr int kEllipsisLabel = -1;
inline constexpr int kFirstBroadcastLabel = 52;

struct EinsumEquation {
  std::string equation;
  // Each input's and the output's labels, kEllipsisLabel for "...".
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
};

// Parses "<in>[,<in>]-><out>" for `num_inputs` inputs. InvalidArgument
// naming the 'equation' attr for anything else: no or several "->", not 1
// or 2 inputs, a character that is not a letter, a broken or repeated
// "...", an output label in no input, a label repeated in the output.
absl::StatusOr<EinsumEquation> ParseEinsumEquation(absl::string_view equation,
                                                   int num_inputs);

// The equation applied to inputs of known ranks.
struct EinsumDims {
  // Each input's and the output's labels, ellipses expanded into broadcast
  // labels (an input with fewer ellipsis dims takes the last ones).
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
  // Size of each label by id (-1 unknown): letters first, then the
  // broadcast dims' sizes after broadcasting.
  std::vector<int64_t> label_sizes;
  int num_broadcast = 0;

  std::vector<int64_t> OutputDims() const;
};

// Checks the inputs' dims (-1 unknown) against the equation: each input's
// rank matches its subscript, a label has one size everywhere, ellipsis
// dims broadcast, and the output keeps every broadcast dim. InvalidArgument
// ("Einsum: ...") otherwise.
absl::StatusOr<EinsumDims> ResolveEinsum(
    const EinsumEquation& eq, const std::vector<std::vector<int64_t>>& dims);

// "a", "B", or "...[2]" for broadcast dim 2: for error messages.
std::string EinsumLabelName(int label);

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_OPS_EINSUM_EQUATION_H_
