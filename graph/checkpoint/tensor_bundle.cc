#include "graph/checkpoint/tensor_bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "graph/checkpoint/crc32c.h"
#include "graph/checkpoint/file_io.h"
#include "graph/checkpoint/table.h"
#include "graph/status_macros.h"
#include "graph/types.h"

namespace graphrun {
namespace {

using checkpoint_io::ErrnoStatus;

std::string Quoted(absl::string_view key) { return absl::StrCat("\"", absl::CEscape(key), "\""); }

// Tensors this big have their checksum computed on another thread while
// their bytes are written or read.
constexpr size_t kOverlapBytes = size_t{4} << 20;
constexpr int64_t kReadChunk = int64_t{8} << 20;

// Bytes [offset, offset + size) of `path` into dst and their CRC32C: chunk
// k's checksum is computed while chunk k + 1 is read.
absl::StatusOr<uint32_t> ReadWithCrc(const std::string& path, int64_t offset, int64_t size,
                                     char* dst) {
  if (static_cast<size_t>(size) < kOverlapBytes) {
    GR_RETURN_IF_ERROR(checkpoint_io::ReadRangeInto(path, offset, size, dst));
    return crc32c::Extend(0, dst, static_cast<size_t>(size));
  }
  uint32_t crc = 0;
  std::future<uint32_t> pending;
  for (int64_t done = 0; done < size; done += kReadChunk) {
    const int64_t n = std::min(kReadChunk, size - done);
    absl::Status s = checkpoint_io::ReadRangeInto(path, offset + done, n, dst + done);
    if (pending.valid()) crc = pending.get();
    if (!s.ok()) return s;
    pending = std::async(std::launch::async, [crc, p = dst + done, n] {
      return crc32c::Extend(crc, p, static_cast<size_t>(n));
    });
  }
  return pending.get();
}

}  // namespace

BundleWriter::BundleWriter(std::string prefix)
    : prefix_(std::move(prefix)), tmp_suffix_(checkpoint_io::TempSuffix()) {}

BundleWriter::~BundleWriter() {
  if (data_fd_ >= 0) ::close(data_fd_);
  if (!finished_) RemoveTempFiles();
}

void BundleWriter::RemoveTempFiles() {
  ::unlink((DataFilename(prefix_, 0, 1) + tmp_suffix_).c_str());
  ::unlink((IndexFilename(prefix_) + tmp_suffix_).c_str());
}

absl::Status BundleWriter::OpenDataFile() {
  // The prefix's directory is created if its parent exists, as TensorFlow's
  // writer does (a sharded Saver writes under "<prefix>_temp/").
  const size_t slash = prefix_.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    const std::string dir = prefix_.substr(0, slash);
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, absl::StrCat("cannot create directory ", dir, " for checkpoint ",
                                             prefix_));
    }
  }
  const std::string path = DataFilename(prefix_, 0, 1) + tmp_suffix_;
  data_fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (data_fd_ < 0) return ErrnoStatus(errno, absl::StrCat("cannot create ", path));
  return absl::OkStatus();
}

absl::Status BundleWriter::Add(absl::string_view key, const Tensor& tensor) {
  if (!status_.ok()) return status_;
  if (finished_) return absl::FailedPreconditionError("BundleWriter::Add after Finish");
  if (key.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint ", prefix_, ": the empty key is reserved for the header"));
  }
  if (entries_.count(std::string(key)) > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint ", prefix_, ": duplicate key ", Quoted(key)));
  }
  if (!tensor.IsInitialized()) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint ", prefix_, ": tensor ", Quoted(key), " is uninitialized"));
  }
  // Fixed-size elements are written from the tensor's own buffer; strings
  // are encoded first.
  absl::string_view bytes;
  absl::StatusOr<EncodedTensor> encoded = EncodedTensor();
  if (tensor.dtype() != DT_STRING && tensor.dtype() != DT_RESOURCE &&
      tensor.dtype() != DT_VARIANT && DataTypeSize(tensor.dtype()) > 0) {
    bytes = absl::string_view(static_cast<const char*>(tensor.raw_data()), tensor.TotalBytes());
  } else {
    encoded = EncodeTensor(tensor);
    if (!encoded.ok()) {
      return WithContext(encoded.status(), absl::StrCat("saving ", Quoted(key)));
    }
    bytes = encoded->bytes;
  }
  if (data_fd_ < 0) {
    status_ = OpenDataFile();
    if (!status_.ok()) return status_;
  }
  if (encoded->bytes.empty() && !bytes.empty()) {
    // A buffer written as it is: its checksum, for a big one on another
    // thread while the bytes go to the file.
    std::future<uint32_t> crc;
    if (bytes.size() >= kOverlapBytes) {
      crc = std::async(std::launch::async, [bytes] { return crc32c::Value(bytes); });
    }
    status_ = checkpoint_io::WriteBehind(data_fd_, bytes, data_size_, DataFilename(prefix_, 0, 1));
    encoded->crc32c = crc.valid() ? crc.get() : crc32c::Value(bytes);
  } else {
    status_ = checkpoint_io::WriteBehind(data_fd_, bytes, data_size_, DataFilename(prefix_, 0, 1));
  }
  if (!status_.ok()) return status_;
  BundleEntryProto& entry = entries_[std::string(key)];
  entry.set_dtype(tensor.dtype());
  tensor.shape().AsProto(entry.mutable_shape());
  entry.set_shard_id(0);
  entry.set_offset(data_size_);
  entry.set_size(static_cast<int64_t>(bytes.size()));
  entry.set_crc32c(crc32c::Mask(encoded->crc32c));
  data_size_ += static_cast<int64_t>(bytes.size());
  return absl::OkStatus();
}

absl::Status BundleWriter::Finish() {
  if (!status_.ok()) return status_;
  if (finished_) return absl::FailedPreconditionError("BundleWriter::Finish called twice");
  if (data_fd_ < 0) {  // no tensors: still an (empty) data file, as TensorFlow writes
    status_ = OpenDataFile();
    if (!status_.ok()) return status_;
  }
  const std::string data_path = DataFilename(prefix_, 0, 1);
  const std::string index_path = IndexFilename(prefix_);
  if (::fsync(data_fd_) != 0) status_ = ErrnoStatus(errno, absl::StrCat("cannot sync ", data_path));
  if (::close(data_fd_) != 0 && status_.ok()) {
    status_ = ErrnoStatus(errno, absl::StrCat("cannot close ", data_path));
  }
  data_fd_ = -1;
  if (!status_.ok()) return status_;

  BundleHeaderProto header;
  header.set_num_shards(1);
  header.set_endianness(BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(kTensorBundleVersion);
  TableBuilder table;
  status_ = table.Add("", header.SerializeAsString());
  for (const auto& [key, entry] : entries_) {
    if (!status_.ok()) break;
    status_ = table.Add(key, entry.SerializeAsString());
  }
  if (!status_.ok()) return status_;
  const std::string index_bytes = table.Finish();

  const std::string index_tmp = index_path + tmp_suffix_;
  const int fd = ::open(index_tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return status_ = ErrnoStatus(errno, absl::StrCat("cannot create ", index_tmp));
  status_ = checkpoint_io::WriteAll(fd, index_bytes, index_tmp);
  if (status_.ok() && ::fsync(fd) != 0) {
    status_ = ErrnoStatus(errno, absl::StrCat("cannot sync ", index_tmp));
  }
  if (::close(fd) != 0 && status_.ok()) {
    status_ = ErrnoStatus(errno, absl::StrCat("cannot close ", index_tmp));
  }
  if (!status_.ok()) return status_;
  checkpoint_io::CrashPoint("bundle.data_written");
  // Data first: the index is what makes a bundle visible to readers.
  if (::rename((data_path + tmp_suffix_).c_str(), data_path.c_str()) != 0) {
    return status_ = ErrnoStatus(errno, absl::StrCat("cannot rename into ", data_path));
  }
  checkpoint_io::CrashPoint("bundle.between_renames");
  if (::rename(index_tmp.c_str(), index_path.c_str()) != 0) {
    return status_ = ErrnoStatus(errno, absl::StrCat("cannot rename into ", index_path));
  }
  finished_ = true;
  return status_ = checkpoint_io::SyncParentDir(index_path);
}

BundleReader::BundleReader(std::string prefix, BundleIndex index)
    : prefix_(std::move(prefix)), index_(std::move(index)) {}

absl::StatusOr<std::unique_ptr<BundleReader>> BundleReader::Open(const std::string& prefix) {
  const std::string path = IndexFilename(prefix);
  absl::StatusOr<std::string> contents = checkpoint_io::ReadFile(path);
  if (!contents.ok()) {
    return WithContext(contents.status(), absl::StrCat("opening checkpoint ", prefix));
  }
  GR_ASSIGN_OR_RETURN(BundleIndex index, ParseBundleIndex(*contents, path));
  return std::unique_ptr<BundleReader>(new BundleReader(prefix, std::move(index)));
}

const BundleEntryProto* BundleReader::Find(absl::string_view key) const {
  auto it = std::lower_bound(index_.entries.begin(), index_.entries.end(), key,
                             [](const std::pair<std::string, BundleEntryProto>& e,
                                absl::string_view k) { return absl::string_view(e.first) < k; });
  if (it == index_.entries.end() || it->first != key) return nullptr;
  return &it->second;
}

std::vector<BundleTensorInfo> BundleReader::ListTensors() const {
  std::vector<BundleTensorInfo> out;
  for (const auto& [key, entry] : index_.entries) {
    if (key[0] == '\0') continue;  // a slice of a partitioned tensor
    BundleTensorInfo info;
    info.key = key;
    info.dtype = entry.dtype();
    info.shape = *TensorShape::FromProto(entry.shape());  // checked at Open
    out.push_back(std::move(info));
  }
  return out;
}

bool BundleReader::Contains(absl::string_view key) const { return Find(key) != nullptr; }

absl::StatusOr<BundleTensorInfo> BundleReader::GetInfo(absl::string_view key) const {
  const BundleEntryProto* entry = Find(key);
  if (entry == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("key ", Quoted(key), " not found in checkpoint ", prefix_));
  }
  return BundleTensorInfo{std::string(key), entry->dtype(),
                          *TensorShape::FromProto(entry->shape())};
}

absl::StatusOr<Tensor> BundleReader::Lookup(absl::string_view key) const {
  const BundleEntryProto* entry = Find(key);
  if (entry == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("key ", Quoted(key), " not found in checkpoint ", prefix_));
  }
  if (entry->slices_size() > 0) {
    return absl::UnimplementedError(absl::StrCat("tensor ", Quoted(key), " in checkpoint ", prefix_,
                                                 " is partitioned into ", entry->slices_size(),
                                                 " slices"));
  }
  const std::string path = DataFilename(prefix_, entry->shard_id(), index_.header.num_shards());
  const std::string what = absl::StrCat(path, ", key ", Quoted(key));
  // Little-endian fixed-size elements (not bool) are read straight into the
  // tensor's buffer, once the file is known to hold them; the rest decode
  // from a copy.
  const DataType dtype = entry->dtype();
  const int width = DataTypeSize(dtype);
  struct stat st;
  absl::StatusOr<TensorShape> shape = TensorShape::FromProto(entry->shape());
  if (dtype != DT_STRING && dtype != DT_BOOL && dtype != DT_RESOURCE && dtype != DT_VARIANT &&
      width > 0 && index_.header.endianness() != BundleHeaderProto::BIG && shape.ok() &&
      entry->size() >= 0 && entry->size() % width == 0 &&
      shape->num_elements() == entry->size() / width && ::stat(path.c_str(), &st) == 0 &&
      entry->offset() >= 0 && entry->offset() <= st.st_size &&
      entry->size() <= st.st_size - entry->offset()) {
    absl::StatusOr<Tensor> t =
        Tensor::Allocate(HostAllocator(), dtype, *shape, TensorBuffer::Init::kUninitialized);
    if (!t.ok()) return WithContext(t.status(), absl::StrCat("reading key ", Quoted(key)));
    char* dst = static_cast<char*>(t->raw_data());
    absl::StatusOr<uint32_t> crc = ReadWithCrc(path, entry->offset(), entry->size(), dst);
    if (!crc.ok()) return WithContext(crc.status(), absl::StrCat("reading key ", Quoted(key)));
    if (crc32c::Mask(*crc) != entry->crc32c()) {
      return absl::DataLossError(absl::StrCat(what, ": checksum mismatch in tensor bytes"));
    }
    return t;
  }
  absl::StatusOr<std::string> bytes =
      checkpoint_io::ReadRange(path, entry->offset(), entry->size());
  if (!bytes.ok()) return WithContext(bytes.status(), absl::StrCat("reading key ", Quoted(key)));
  return DecodeTensor(*entry, index_.header.endianness() == BundleHeaderProto::BIG, *bytes, what);
}

}  // namespace graphrun
