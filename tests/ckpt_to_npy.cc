// ckpt_to_npy PREFIX KEY OUT.npy: writes the tensor KEY of the V2
// checkpoint at PREFIX as a .npy file (exit 1, saying why, when it cannot).
// Used by the CLI tests to compare checkpoints with expected values.
#include <cstdio>

#include "graph/checkpoint/tensor_bundle.h"
#include "graph/npy.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: ckpt_to_npy PREFIX KEY OUT.npy\n");
    return 2;
  }
  auto reader = graphrun::BundleReader::Open(argv[1]);
  if (!reader.ok()) {
    std::fprintf(stderr, "%s\n", reader.status().ToString().c_str());
    return 1;
  }
  auto t = (*reader)->Lookup(argv[2]);
  absl::Status s = t.ok() ? graphrun::WriteNpyFile(argv[3], *t) : t.status();
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
