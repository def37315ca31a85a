// Tensors of the TensorFlow-recorded fixtures for the C++ tests: a .npy
// file read, and one step's slice of a tensor with a leading step axis.
#ifndef GRAPHRUN_TESTS_FIXTURE_TENSORS_H_
#define GRAPHRUN_TESTS_FIXTURE_TENSORS_H_

#include <string>

#include "graph/npy.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"

namespace graphrun {

// The .npy file at `path`; an empty tensor, and a test failure, when it
// does not read.
inline Tensor FixtureNpy(const std::string& path) {
  absl::StatusOr<Tensor> t = ReadNpyFile(path);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

// t[step], without the leading axis.
inline Tensor StepRow(const Tensor& t, int64_t step) {
  TensorShape row = t.shape();
  row.RemoveDim(0);
  return *t.Slice(step, step + 1).Reshaped(row);
}

}  // namespace graphrun

#endif  // GRAPHRUN_TESTS_FIXTURE_TENSORS_H_
