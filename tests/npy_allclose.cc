// npy_allclose A.npy B.npy [TOL [ROW]]: exit 0 if the arrays have the same
// dtype and shape and agree within TOL (relative and absolute), else print
// why and exit 1. With ROW, A is compared with B[ROW] (B's slice ROW of its
// first axis, as many values as A has, in A's shape): one step of a run
// against a recording of every step. Used by the CLI tests.
#include <cstdio>
#include <cstdlib>

#include "graph/npy.h"
#include "kernels/testing/kernel_test_util.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: npy_allclose A.npy B.npy [TOL [ROW]]\n");
    return 2;
  }
  const double tol = argc > 3 ? std::atof(argv[3]) : 1e-5;
  auto a = graphrun::ReadNpyFile(argv[1]);
  auto b = graphrun::ReadNpyFile(argv[2]);
  if (!a.ok() || !b.ok()) {
    std::fprintf(stderr, "%s\n", (!a.ok() ? a.status() : b.status()).ToString().c_str());
    return 1;
  }
  if (argc > 4) {
    const long row = std::atol(argv[4]);
    if (b->dims() == 0 || row < 0 || row >= b->dim_size(0)) {
      std::fprintf(stderr, "%s has no row %ld\n", argv[2], row);
      return 1;
    }
    auto sliced = b->Slice(row, row + 1).Reshaped(a->shape());
    if (!sliced.ok()) {
      std::fprintf(stderr, "row %ld of %s: %s\n", row, argv[2], sliced.status().ToString().c_str());
      return 1;
    }
    *b = *std::move(sliced);
  }
  std::string why;
  if (!graphrun::testing::AllClose(*a, *b, tol, tol, &why)) {
    std::fprintf(stderr, "differ: %s\n", why.c_str());
    return 1;
  }
  return 0;
}
