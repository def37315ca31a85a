// npy_allclose A.npy B.npy [TOL]: exit 0 if the arrays have the same dtype
// and shape and agree within TOL (relative and absolute), else print why and
// exit 1. Used by the CLI tests.
#include <cstdio>
#include <cstdlib>

#include "graph/npy.h"
#include "kernels/testing/kernel_test_util.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: npy_allclose A.npy B.npy [TOL]\n");
    return 2;
  }
  const double tol = argc > 3 ? std::atof(argv[3]) : 1e-5;
  auto a = graphrun::ReadNpyFile(argv[1]);
  auto b = graphrun::ReadNpyFile(argv[2]);
  if (!a.ok() || !b.ok()) {
    std::fprintf(stderr, "%s\n", (!a.ok() ? a.status() : b.status()).ToString().c_str());
    return 1;
  }
  std::string why;
  if (!graphrun::testing::AllClose(*a, *b, tol, tol, &why)) {
    std::fprintf(stderr, "differ: %s\n", why.c_str());
    return 1;
  }
  return 0;
}
