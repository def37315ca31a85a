#include "graph/graph_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/text_format.h"
#include "graph/status_macros.h"

namespace graphrun {
namespace {

// Collects text-format errors with 1-based line and column.
class TextErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    errors_.push_back(absl::StrCat("line ", line + 1, ", column ", column + 1,
                                   ": ", message));
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber,
                  const std::string&) override {}
  std::string Summary() const {
    return errors_.empty() ? "syntax error" : absl::StrJoin(errors_, "; ");
  }

 private:
  std::vector<std::string> errors_;
};

absl::Status ErrnoStatus(int err, absl::string_view what) {
  std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT: return absl::NotFoundError(msg);
    case EACCES: case EPERM: case EROFS: return absl::PermissionDeniedError(msg);
    case ENOSPC: return absl::ResourceExhaustedError(msg);
    default: return absl::InternalError(msg);
  }
}

}  // namespace

std::string SerializeDeterministically(const google::protobuf::Message& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

absl::StatusOr<GraphFormat> ParseGraphFormat(absl::string_view name) {
  const std::string n = absl::AsciiStrToLower(name);
  if (n == "auto") return GraphFormat::kAuto;
  if (n == "text" || n == "pbtxt") return GraphFormat::kText;
  if (n == "binary" || n == "pb") return GraphFormat::kBinary;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown graph format '", name, "' (use text or binary)"));
}

GraphFormat DetectGraphFormat(absl::string_view path, absl::string_view data) {
  for (absl::string_view ext : {".pbtxt", ".pbtext", ".txt", ".prototxt"}) {
    if (absl::EndsWith(path, ext)) return GraphFormat::kText;
  }
  if (absl::EndsWith(path, ".pb")) return GraphFormat::kBinary;
  // Text protos are printable; a binary GraphDef starts with a tag byte
  // (0x0a for `node`) and holds control bytes.
  size_t i = 0;
  while (i < data.size() && absl::ascii_isspace(data[i])) ++i;
  if (i == data.size()) return GraphFormat::kText;  // empty text == empty graph
  if (!absl::ascii_isalpha(data[i]) && data[i] != '#') return GraphFormat::kBinary;
  const size_t n = std::min<size_t>(data.size(), 4096);
  for (size_t k = 0; k < n; ++k) {
    unsigned char c = data[k];
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return GraphFormat::kBinary;
  }
  return GraphFormat::kText;
}

absl::Status ParseProto(absl::string_view data, GraphFormat format,
                        absl::string_view what, google::protobuf::Message* out) {
  if (format == GraphFormat::kAuto) format = DetectGraphFormat("", data);
  out->Clear();
  if (format == GraphFormat::kText) {
    google::protobuf::TextFormat::Parser parser;
    TextErrors errors;
    parser.RecordErrorsTo(&errors);
    google::protobuf::io::ArrayInputStream in(data.data(),
                                               static_cast<int>(data.size()));
    if (!parser.Parse(&in, out)) {
      out->Clear();
      return absl::InvalidArgumentError(absl::StrCat(
          "cannot parse ", what, " as a text ", out->GetTypeName(), ": ",
          errors.Summary()));
    }
    return absl::OkStatus();
  }
  if (data.size() > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is over 2 GiB, the protobuf limit"));
  }
  google::protobuf::io::CodedInputStream in(
      reinterpret_cast<const uint8_t*>(data.data()),
      static_cast<int>(data.size()));
  in.SetTotalBytesLimit(INT32_MAX);
  if (!out->ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
    out->Clear();
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot parse ", what, " as a binary ", out->GetTypeName(),
        ": the data is truncated or corrupt (", data.size(), " bytes)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<GraphDef> ParseGraphDef(absl::string_view data,
                                       GraphFormat format,
                                       absl::string_view what) {
  GraphDef graph;
  GR_RETURN_IF_ERROR(ParseProto(data, format, what, &graph));
  return graph;
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return ErrnoStatus(errno, absl::StrCat("cannot open ", path));
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::fclose(f);
    return absl::InvalidArgumentError(absl::StrCat(path, " is a directory"));
  }
  std::string data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) data.append(buf, n);
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return ErrnoStatus(errno, absl::StrCat("cannot read ", path));
  return data;
}

absl::StatusOr<GraphDef> ReadGraphDefFile(const std::string& path,
                                          GraphFormat format) {
  GR_ASSIGN_OR_RETURN(std::string data, ReadFileToString(path));
  if (format == GraphFormat::kAuto) format = DetectGraphFormat(path, data);
  return ParseGraphDef(data, format, path);
}

absl::StatusOr<std::string> SerializeGraphDef(const GraphDef& graph,
                                              GraphFormat format) {
  std::string out;
  if (format == GraphFormat::kText) {
    if (!google::protobuf::TextFormat::PrintToString(graph, &out)) {
      return absl::InternalError("cannot print the graph as text");
    }
    return out;
  }
  if (graph.ByteSizeLong() > static_cast<size_t>(INT32_MAX)) {
    return absl::InvalidArgumentError(
        "graph is over 2 GiB, the binary protobuf limit; use text format");
  }
  return SerializeDeterministically(graph);
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view data) {
  std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("cannot write ", path));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return ErrnoStatus(err, absl::StrCat("cannot write ", path));
    }
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus(err, absl::StrCat("cannot write ", path));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoStatus(err, absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

absl::Status WriteGraphDefFile(const std::string& path, const GraphDef& graph,
                               GraphFormat format) {
  if (format == GraphFormat::kAuto) {
    format = DetectGraphFormat(path, "") == GraphFormat::kText
                 ? GraphFormat::kText
                 : GraphFormat::kBinary;
    if (!absl::EndsWith(path, ".pbtxt") && !absl::EndsWith(path, ".txt") &&
        !absl::EndsWith(path, ".pbtext") && !absl::EndsWith(path, ".prototxt")) {
      format = GraphFormat::kBinary;
    }
  }
  GR_ASSIGN_OR_RETURN(std::string data, SerializeGraphDef(graph, format));
  return WriteFileAtomically(path, data);
}

}  // namespace graphrun
