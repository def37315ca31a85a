#include "tools/local_workers.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <deque>
#include <string>
#include <thread>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace graphrun {
namespace {

constexpr int kStartTimeoutMs = 30000;
constexpr char kServingOn[] = " serving on ";

// Reads child output until a full line arrives or the deadline passes.
absl::StatusOr<std::string> ReadLine(int fd, const std::string& task,
                                     std::chrono::steady_clock::time_point deadline) {
  std::string line;
  while (true) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      return absl::UnavailableError(absl::StrCat("task ", task, " did not start within ",
                                                 kStartTimeoutMs / 1000, " s"));
    }
    pollfd p{fd, POLLIN, 0};
    const int ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count());
    const int r = poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char c;
    const ssize_t got = read(fd, &c, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return absl::UnavailableError(
          absl::StrCat("task ", task, " exited before serving (see its messages above)"));
    }
    if (c == '\n') return line;
    line.push_back(c);
  }
}

absl::Mutex program_mu;
std::string& LocalWorkerProgramLocked() {
  static std::string* program = new std::string();
  return *program;
}

std::string LocalWorkerProgram() {
  absl::MutexLock lock(&program_mu);
  return LocalWorkerProgramLocked();
}

// Runs functions on one thread that lives as long as the process. A task's
// PR_SET_PDEATHSIG fires when the thread that forked it ends, not the
// process: forked from a short-lived thread (a Python thread that made a
// session), the tasks would stop with that thread.
class Spawner {
 public:
  static Spawner& Get() {
    static Spawner* spawner = new Spawner();  // never destroyed: its thread never ends
    return *spawner;
  }

  // Runs `fn` there and waits for it.
  void Run(absl::FunctionRef<void()> fn) {
    bool done = false;
    absl::MutexLock lock(&mu_);
    queue_.push_back(Item{fn, &done});
    mu_.Await(absl::Condition(&done));
  }

 private:
  struct Item {
    absl::FunctionRef<void()> fn;
    bool* done;
  };

  Spawner() {
    std::thread([this] { Loop(); }).detach();
  }

  void Loop() {
    absl::MutexLock lock(&mu_);
    for (;;) {
      mu_.Await(absl::Condition(this, &Spawner::HasWork));
      Item item = queue_.front();
      queue_.pop_front();
      mu_.Unlock();
      item.fn();
      mu_.Lock();
      *item.done = true;
    }
  }

  bool HasWork() const { return !queue_.empty(); }

  absl::Mutex mu_;
  std::deque<Item> queue_;
};

}  // namespace

void SetLocalWorkerProgram(const std::string& path) {
  absl::MutexLock lock(&program_mu);
  LocalWorkerProgramLocked() = path;
}

absl::StatusOr<std::unique_ptr<LocalWorkers>> LocalWorkers::Start(
    int n, const std::vector<std::string>& worker_args, int ps, int skip_worker) {
  if (n < 1 || n > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("--local_workers must be between 1 and 64, not ", n));
  }
  if (ps < 0 || ps > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("--local_ps must be between 0 and 64, not ", ps));
  }
  // (job, task index) of each process, workers first.
  std::vector<std::pair<std::string, int>> tasks;
  for (int i = 0; i < n; ++i) {
    if (i != skip_worker) tasks.emplace_back("worker", i);
  }
  for (int i = 0; i < ps; ++i) tasks.emplace_back("ps", i);
  char self[4096];
  if (std::string program = LocalWorkerProgram(); !program.empty()) {
    if (program.size() >= sizeof(self)) return absl::InvalidArgumentError("worker program path too long");
    std::memcpy(self, program.c_str(), program.size() + 1);
  } else {
    const ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0) return absl::InternalError("cannot find this program's path");
    self[len] = '\0';
  }
  std::unique_ptr<LocalWorkers> workers(new LocalWorkers());
  std::vector<int> fds;
  const pid_t parent = getpid();
  // Forked from the spawner thread (see Spawner).
  auto fork_all = [&]() -> absl::Status {
    for (const auto& [job, index] : tasks) {
      int pipe_fds[2];
      if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
        return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
      }
      std::vector<std::string> args = {self, "worker", "--listen=127.0.0.1:0",
                                        absl::StrCat("--job=", job), absl::StrCat("--task=", index)};
      args.insert(args.end(), worker_args.begin(), worker_args.end());
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      const pid_t pid = fork();
      if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
      if (pid == 0) {
        // The worker goes when this process does, however it ends.
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(1);
        dup2(pipe_fds[1], STDOUT_FILENO);
        execv(self, argv.data());
        _exit(127);
      }
      close(pipe_fds[1]);
      workers->pids_.push_back(pid);
      fds.push_back(pipe_fds[0]);
    }
    return absl::OkStatus();
  };
  absl::Status forked;
  Spawner::Get().Run([&] { forked = fork_all(); });
  if (!forked.ok()) return forked;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kStartTimeoutMs);
  absl::Status status;
  for (size_t i = 0; i < tasks.size() && status.ok(); ++i) {
    const std::string task =
        absl::StrCat("/job:", tasks[i].first, "/replica:0/task:", tasks[i].second);
    absl::StatusOr<std::string> line = ReadLine(fds[i], task, deadline);
    if (!line.ok()) {
      status = line.status();
      break;
    }
    const size_t at = line->find(kServingOn);
    if (at == std::string::npos) {
      status = absl::UnavailableError(
          absl::StrCat("task ", task, " said '", *line, "' instead of where it serves"));
      break;
    }
    std::string address = line->substr(at + sizeof(kServingOn) - 1);
    address = address.substr(0, address.find(' '));
    workers->cluster_[task] = address;
  }
  // Kept open until the workers stop, so that a worker writing to stdout
  // never dies of SIGPIPE.
  workers->fds_ = std::move(fds);
  if (!status.ok()) return status;  // the destructor stops those started
  return workers;
}

LocalWorkers::~LocalWorkers() {
  for (pid_t pid : pids_) kill(pid, SIGTERM);
  // A worker gets 5 s to stop cleanly, then is killed.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (pid_t pid : pids_) {
    int st = 0;
    while (true) {
      const pid_t r = waitpid(pid, &st, WNOHANG);
      if (r == pid || (r < 0 && errno != EINTR)) break;
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
        }
        break;
      }
      timespec ts{0, 10 * 1000 * 1000};
      nanosleep(&ts, nullptr);
    }
  }
  for (int fd : fds_) close(fd);
}

}  // namespace graphrun
