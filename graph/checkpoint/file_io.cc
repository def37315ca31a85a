#include "graph/checkpoint/file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace graphrun {
namespace checkpoint_io {

absl::Status ErrnoStatus(int err, absl::string_view what) {
  const std::string message = absl::StrCat(what, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::InternalError(message);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("cannot open ", path));
  std::string out;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoStatus(err, absl::StrCat("cannot read ", path));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

absl::Status ReadRangeInto(const std::string& path, int64_t offset, int64_t size, char* dst) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("cannot open ", path));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoStatus(err, absl::StrCat("cannot stat ", path));
  }
  if (offset < 0 || size < 0 || offset > st.st_size || size > st.st_size - offset) {
    ::close(fd);
    return absl::DataLossError(absl::StrCat(path, " is ", st.st_size, " bytes; bytes [", offset,
                                            ", ", offset, " + ", size, ") are missing"));
  }
  size_t done = 0;
  while (done < static_cast<size_t>(size)) {
    const ssize_t n = ::pread(fd, dst + done, static_cast<size_t>(size) - done, offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n == 0 ? EIO : errno;
      ::close(fd);
      return ErrnoStatus(err, absl::StrCat("cannot read ", path));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadRange(const std::string& path, int64_t offset, int64_t size) {
  // Checked by ReadRangeInto before anything is read; a negative size must
  // not reach the string's constructor.
  std::string out(static_cast<size_t>(std::max<int64_t>(size, 0)), '\0');
  absl::Status s = ReadRangeInto(path, offset, size, out.data());
  if (!s.ok()) return s;
  return out;
}

void CrashPoint(absl::string_view point) {
  // GRAPHRUN_CRASH_AT="<point>:<n>": the n-th time `point` is reached, the
  // process kills itself (SIGKILL), as a power cut or `kill -9` would.
  struct Target {
    std::string point;
    int64_t n = 0;
  };
  static const Target* target = [] {
    auto* t = new Target;
    const char* env = std::getenv("GRAPHRUN_CRASH_AT");
    if (env == nullptr) return t;
    const std::string spec = env;
    const size_t colon = spec.rfind(':');
    t->point = spec.substr(0, colon);
    t->n = colon == std::string::npos ? 1 : std::atoll(spec.c_str() + colon + 1);
    return t;
  }();
  if (target->point.empty() || target->point != point) return;
  static std::atomic<int64_t> reached{0};
  if (++reached == target->n) ::raise(SIGKILL);
}

std::string TempSuffix() {
  static absl::Mutex* mu = new absl::Mutex;
  static absl::BitGen* gen = new absl::BitGen;
  absl::MutexLock lock(mu);
  return absl::StrCat(".tempstate", absl::Uniform<uint64_t>(*gen));
}

absl::Status WriteAll(int fd, absl::string_view data, absl::string_view path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, absl::StrCat("cannot write ", path));
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status WriteBehind(int fd, absl::string_view data, int64_t offset,
                         absl::string_view path) {
  constexpr int64_t kPiece = int64_t{16} << 20;
  while (!data.empty()) {
    const int64_t to_boundary = kPiece - offset % kPiece;
    const size_t n = static_cast<size_t>(std::min<int64_t>(to_boundary, data.size()));
    absl::Status s = WriteAll(fd, data.substr(0, n), path);
    if (!s.ok()) return s;
    data.remove_prefix(n);
    offset += static_cast<int64_t>(n);
#ifdef __linux__
    if (offset % kPiece == 0) {
      ::sync_file_range(fd, offset - kPiece, kPiece, SYNC_FILE_RANGE_WRITE);
      if (offset >= 3 * kPiece) {
        ::sync_file_range(fd, offset - 3 * kPiece, kPiece,
                          SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                              SYNC_FILE_RANGE_WAIT_AFTER);
        // Written and clean: out of the page cache, so a big save keeps
        // recycling a few pieces' pages instead of taking fresh ones (on a
        // virtual machine those cost several times more, and a save's
        // speed swung 3x between runs with them).
        ::posix_fadvise(fd, offset - 3 * kPiece, kPiece, POSIX_FADV_DONTNEED);
      }
    }
#endif
  }
  return absl::OkStatus();
}

absl::Status SyncParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("cannot open directory ", dir));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some filesystems cannot fsync a directory; the rename itself is done.
  if (rc != 0 && err != EINVAL && err != EROFS) {
    return ErrnoStatus(err, absl::StrCat("cannot sync directory ", dir));
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view data) {
  const std::string tmp = path + TempSuffix();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("cannot create ", tmp));
  absl::Status status = WriteAll(fd, data, tmp);
  if (status.ok() && ::fsync(fd) != 0)
    status = ErrnoStatus(errno, absl::StrCat("cannot sync ", tmp));
  if (::close(fd) != 0 && status.ok())
    status = ErrnoStatus(errno, absl::StrCat("cannot close ", tmp));
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = ErrnoStatus(errno, absl::StrCat("cannot rename ", tmp, " to ", path));
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  return SyncParentDir(path);
}

}  // namespace checkpoint_io
}  // namespace graphrun
