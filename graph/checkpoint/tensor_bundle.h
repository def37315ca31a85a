// TensorFlow's checkpoint V2 ("tensor bundle"): BundleWriter saves named
// tensors as PREFIX.index + PREFIX.data-00000-of-00001, readable by
// tf.train.load_checkpoint and Saver.restore; BundleReader reads bundles that
// TensorFlow (or BundleWriter) wrote. Format details: bundle_format.h.
//
// BundleWriter is not thread-safe. BundleReader is immutable after Open;
// Lookup may be called from many threads at once.
#ifndef GRAPHRUN_GRAPH_CHECKPOINT_TENSOR_BUNDLE_H_
#define GRAPHRUN_GRAPH_CHECKPOINT_TENSOR_BUNDLE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/checkpoint/bundle_format.h"
#include "graph/tensor.h"

namespace graphrun {

// Writes one single-shard bundle. Example:
//   BundleWriter writer("/ckpt/model.ckpt-3");
//   GR_RETURN_IF_ERROR(writer.Add("dense/kernel", kernel));
//   GR_RETURN_IF_ERROR(writer.Finish());
//
// The prefix's directory is created when its parent exists. Tensor bytes
// stream to a temporary data file beside the target as they are
// added; Finish writes the index under a temporary name too, fsyncs both,
// then renames data and index into place (and fsyncs the directory). A
// process killed before Finish returns leaves any other bundle untouched;
// one killed between the two renames can leave an old index beside new data
// when a prefix is overwritten, so savers should use a fresh prefix per
// save (as TensorFlow's do, "model.ckpt-<step>") and publish it through the
// `checkpoint` state file (checkpoint_state.h). If the writer is destroyed
// without Finish, its temporary files are removed.
class BundleWriter {
 public:
  explicit BundleWriter(std::string prefix);
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // Adds a tensor of a fixed-size type (float, double, half, bfloat16, ints,
  // uints, bool, complex) or string. InvalidArgument for an empty or
  // duplicate key; Unimplemented for variant/resource tensors; an I/O error
  // naming the file. After an error every later call returns it.
  absl::Status Add(absl::string_view key, const Tensor& tensor);

  // Writes the index and publishes the bundle. Call once.
  absl::Status Finish();

  const std::string& prefix() const { return prefix_; }

 private:
  absl::Status OpenDataFile();
  void RemoveTempFiles();

  std::string prefix_;
  std::string tmp_suffix_;
  int data_fd_ = -1;
  int64_t data_size_ = 0;
  std::map<std::string, BundleEntryProto> entries_;
  absl::Status status_;
  bool finished_ = false;
};

// A tensor's name, type and shape as listed in a bundle.
struct BundleTensorInfo {
  std::string key;
  DataType dtype = DT_INVALID;
  TensorShape shape;
};

class BundleReader {
 public:
  // Reads and checks PREFIX.index. NotFound when it does not exist; DataLoss
  // naming the file when it is corrupt or truncated.
  static absl::StatusOr<std::unique_ptr<BundleReader>> Open(const std::string& prefix);

  // Every tensor, in key order. Slice entries of partitioned tensors (keys
  // starting with '\0') are not listed; their full-tensor entries are.
  std::vector<BundleTensorInfo> ListTensors() const;

  bool Contains(absl::string_view key) const;

  // NotFound naming key and prefix.
  absl::StatusOr<BundleTensorInfo> GetInfo(absl::string_view key) const;

  // Reads the tensor stored under `key`, verifying its CRC32C. NotFound naming
  // key and prefix; DataLoss naming the data file and key when its bytes are
  // missing or corrupt; Unimplemented for partitioned (sliced) tensors.
  absl::StatusOr<Tensor> Lookup(absl::string_view key) const;

  const BundleHeaderProto& header() const { return index_.header; }
  const std::string& prefix() const { return prefix_; }

 private:
  BundleReader(std::string prefix, BundleIndex index);
  const BundleEntryProto* Find(absl::string_view key) const;

  std::string prefix_;
  BundleIndex index_;  // entries sorted by key
};

}  // namespace graphrun

#endif  // GRAPHRUN_GRAPH_CHECKPOINT_TENSOR_BUNDLE_H_
