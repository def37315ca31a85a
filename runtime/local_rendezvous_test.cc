#include "runtime/local_rendezvous.h"

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace graphrun {
namespace {

using Args = Rendezvous::Args;

TEST(RendezvousKeyTest, TensorFlowFormat) {
  EXPECT_EQ(
      CreateRendezvousKey("/job:localhost/replica:0/task:0/device:CPU:0", 1,
                          "/job:localhost/replica:0/task:0/device:GPU:0", "edge_5_MatMul", 0, 0),
      "/job:localhost/replica:0/task:0/device:CPU:0;0000000000000001;"
      "/job:localhost/replica:0/task:0/device:GPU:0;edge_5_MatMul;0:0");
  auto parsed = ParseRendezvousKey(CreateRendezvousKey("/a", 0xabcdef, "/b", "t", 7, 3));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->send_device, "/a");
  EXPECT_EQ(parsed->incarnation, 0xabcdefu);
  EXPECT_EQ(parsed->recv_device, "/b");
  EXPECT_EQ(parsed->tensor_name, "t");
  EXPECT_EQ(parsed->frame_id, 7u);
  EXPECT_EQ(parsed->iter_id, 3);
  for (const char* bad : {"", "a;b;c;d", "/a;1;/b;t;0:0", "/a;000000000000000g;/b;t;0:0",
                          "/a;0000000000000001;/b;t;0", "/a;0000000000000001;;t;0:0"}) {
    EXPECT_FALSE(ParseRendezvousKey(bad).ok()) << bad;
  }
}

TEST(LocalRendezvousTest, SendThenRecvSharesTheBuffer) {
  auto r = NewLocalRendezvous();
  Tensor t = Tensor::Scalar<float>(3);
  ASSERT_TRUE(r->Send("k", {}, t, false).ok());
  bool called = false;
  r->RecvAsync("k", {},
               [&](const absl::Status& s, const Args&, const Args&, const Tensor& v, bool dead) {
                 EXPECT_TRUE(s.ok());
                 EXPECT_FALSE(dead);
                 EXPECT_EQ(v.raw_data(), t.raw_data());  // no copy
                 called = true;
               });
  EXPECT_TRUE(called);
}

TEST(LocalRendezvousTest, RecvThenSendAndDuplicates) {
  auto r = NewLocalRendezvous();
  float got = 0;
  bool got_dead = false;
  r->RecvAsync("k", {},
               [&](const absl::Status& s, const Args&, const Args&, const Tensor& v, bool dead) {
                 ASSERT_TRUE(s.ok());
                 got = v.scalar<float>();
                 got_dead = dead;
               });
  EXPECT_EQ(got, 0);
  ASSERT_TRUE(r->Send("k", {}, Tensor::Scalar<float>(5), true).ok());
  EXPECT_EQ(got, 5);
  EXPECT_TRUE(got_dead);  // the deadness travels with the value
  ASSERT_TRUE(r->Send("twice", {}, Tensor::Scalar<float>(1), false).ok());
  EXPECT_EQ(r->Send("twice", {}, Tensor::Scalar<float>(1), false).code(),
            absl::StatusCode::kInternal);
}

// Deadness arrives either way round, and each key keeps its own.
TEST(LocalRendezvousTest, DeadnessTravelsInBothOrders) {
  auto r = NewLocalRendezvous();
  ASSERT_TRUE(r->Send("dead_first", {}, Tensor(), true).ok());
  ASSERT_TRUE(r->Send("live_first", {}, Tensor::Scalar<float>(1), false).ok());
  int calls = 0;
  r->RecvAsync("dead_first", {},
               [&](const absl::Status& s, const Args&, const Args&, const Tensor&, bool dead) {
                 EXPECT_TRUE(s.ok());
                 EXPECT_TRUE(dead);
                 ++calls;
               });
  r->RecvAsync("live_first", {},
               [&](const absl::Status& s, const Args&, const Args&, const Tensor& v, bool dead) {
                 EXPECT_TRUE(s.ok());
                 EXPECT_FALSE(dead);
                 EXPECT_EQ(v.scalar<float>(), 1.0f);
                 ++calls;
               });
  r->RecvAsync("dead_later", {},
               [&](const absl::Status& s, const Args&, const Args&, const Tensor&, bool dead) {
                 EXPECT_TRUE(s.ok());
                 EXPECT_TRUE(dead);
                 ++calls;
               });
  ASSERT_TRUE(r->Send("dead_later", {}, Tensor(), true).ok());
  EXPECT_EQ(calls, 3);
}

// The hook sees exactly the Recvs that had to wait, with their rendezvous.
std::vector<std::pair<const Rendezvous*, std::string>>* hook_calls = nullptr;
void RecordWaitingRecv(const Rendezvous* r, absl::string_view key) {
  hook_calls->emplace_back(r, std::string(key));
}

TEST(LocalRendezvousTest, RecvWaitingHookSeesOnlyWaitingRecvs) {
  std::vector<std::pair<const Rendezvous*, std::string>> calls;
  hook_calls = &calls;
  SetRecvWaitingHookForTest(RecordWaitingRecv);
  auto r = NewLocalRendezvous();
  ASSERT_TRUE(r->Send("sent_first", {}, Tensor::Scalar<float>(1), false).ok());
  r->RecvAsync("sent_first", {},
               [](const absl::Status&, const Args&, const Args&, const Tensor&, bool) {});
  EXPECT_TRUE(calls.empty());
  bool received = false;
  r->RecvAsync(
      "waits", {},
      [&](const absl::Status&, const Args&, const Args&, const Tensor&, bool) { received = true; });
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].first, r.get());
  EXPECT_EQ(calls[0].second, "waits");
  EXPECT_FALSE(received);
  ASSERT_TRUE(r->Send("waits", {}, Tensor::Scalar<float>(2), false).ok());
  EXPECT_TRUE(received);
  SetRecvWaitingHookForTest(nullptr);
  r->RecvAsync("unhooked", {},
               [](const absl::Status&, const Args&, const Args&, const Tensor&, bool) {});
  EXPECT_EQ(calls.size(), 1u);
  hook_calls = nullptr;
}

TEST(LocalRendezvousTest, AbortFailsPendingAndLaterCalls) {
  auto r = NewLocalRendezvous();
  absl::Status pending;
  r->RecvAsync(
      "never", {},
      [&](const absl::Status& s, const Args&, const Args&, const Tensor&, bool) { pending = s; });
  r->StartAbort(absl::CancelledError("stop"));
  EXPECT_EQ(pending.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(r->Send("x", {}, Tensor::Scalar<float>(1), false).code(), absl::StatusCode::kCancelled);
  absl::Status later;
  r->RecvAsync("y", {}, [&](const absl::Status& s, const Args&, const Args&, const Tensor&, bool) {
    later = s;
  });
  EXPECT_EQ(later.code(), absl::StatusCode::kCancelled);
  r->StartAbort(absl::InternalError("second abort is ignored"));
  r->RecvAsync("z", {}, [&](const absl::Status& s, const Args&, const Args&, const Tensor&, bool) {
    later = s;
  });
  EXPECT_EQ(later.code(), absl::StatusCode::kCancelled);
}

TEST(LocalRendezvousTest, ManyThreads) {
  auto r = NewLocalRendezvous();
  constexpr int kKeys = 2000;
  std::atomic<int64_t> sum{0};
  std::atomic<int> done{0};
  std::thread sender([&] {
    for (int i = 0; i < kKeys; ++i) {
      ASSERT_TRUE(r->Send(absl::StrCat("k", i), {}, Tensor::Scalar<int64_t>(i), false).ok());
    }
  });
  std::thread receiver([&] {
    for (int i = kKeys - 1; i >= 0; --i) {
      r->RecvAsync(absl::StrCat("k", i), {},
                   [&](const absl::Status& s, const Args&, const Args&, const Tensor& v, bool) {
                     ASSERT_TRUE(s.ok());
                     sum += v.scalar<int64_t>();
                     ++done;
                   });
    }
  });
  sender.join();
  receiver.join();
  EXPECT_EQ(done.load(), kKeys);
  EXPECT_EQ(sum.load(), int64_t{kKeys} * (kKeys - 1) / 2);
}

// A device that is only a name and a type: what a rendezvous reads of one.
class NamedDevice : public DeviceBase {
 public:
  NamedDevice(std::string name, std::string type)
      : name_(std::move(name)), type_(std::move(type)) {}
  const std::string& name() const override { return name_; }
  const std::string& device_type() const override { return type_; }
  Allocator* allocator() const override { return nullptr; }
  const Eigen::ThreadPoolDevice* eigen_cpu_device() const override { return nullptr; }
  int intra_op_threads() const override { return 1; }

 private:
  std::string name_, type_;
};

// Between host-memory ends the value is handed over by reference, in either
// order, and the Recv learns both ends.
TEST(LocalRendezvousTest, HostMemoryEndsShareTheBufferAndSeeEachOther) {
  NamedDevice cpu0("/job:localhost/replica:0/task:0/device:CPU:0", kDeviceCpu);
  NamedDevice cpu1("/job:localhost/replica:0/task:0/device:CPU:1", kDeviceCpu);
  NamedDevice gpu0("/job:localhost/replica:0/task:0/device:GPU:0", kDeviceGpu);
  Args on_cpu0{&cpu0}, on_cpu1{&cpu1};
  Args gpu_host_memory{&gpu0};
  gpu_host_memory.host_memory = true;
  EXPECT_TRUE(Rendezvous::InHostMemory(on_cpu0));
  EXPECT_TRUE(Rendezvous::InHostMemory(Args()));  // the client
  EXPECT_TRUE(Rendezvous::InHostMemory(gpu_host_memory));
  EXPECT_FALSE(Rendezvous::InHostMemory(Args{&gpu0}));

  for (const Args& recv_end : {on_cpu1, gpu_host_memory}) {
    for (bool send_first : {true, false}) {
      auto r = NewLocalRendezvous();
      Tensor t(DT_FLOAT, TensorShape({256}));
      const void* buffer = t.raw_data();
      int calls = 0;
      auto recv = [&] {
        r->RecvAsync("k", recv_end,
                     [&](const absl::Status& s, const Args& send_args, const Args& recv_args,
                         const Tensor& v, bool dead) {
                       ASSERT_TRUE(s.ok()) << s;
                       EXPECT_FALSE(dead);
                       EXPECT_EQ(send_args.device, &cpu0);
                       EXPECT_EQ(recv_args.device, recv_end.device);
                       EXPECT_EQ(recv_args.host_memory, recv_end.host_memory);
                       EXPECT_EQ(v.raw_data(), buffer);  // the same buffer: no copy
                       ++calls;
                     });
      };
      if (!send_first) recv();
      ASSERT_TRUE(r->Send("k", on_cpu0, t, false).ok());
      if (send_first) recv();
      EXPECT_EQ(calls, 1);
    }
  }
}

// An end in a device's own memory is copied through the device's context;
// a device that claims memory of its own but has none to copy with fails
// the Recv with Unimplemented naming both devices, in either order. (The
// copies themselves: runtime/gpu/gpu_device_test.cc.)
TEST(LocalRendezvousTest, DeviceMemoryEndWithoutAContextIsRefusedNamingTheDevices) {
  NamedDevice cpu0("/job:localhost/replica:0/task:0/device:CPU:0", kDeviceCpu);
  NamedDevice gpu0("/job:localhost/replica:0/task:0/device:GPU:0", kDeviceGpu);
  for (bool gpu_sends : {true, false}) {
    for (bool send_first : {true, false}) {
      auto r = NewLocalRendezvous();
      const Args send_end{gpu_sends ? &gpu0 : &cpu0};
      const Args recv_end{gpu_sends ? &cpu0 : &gpu0};
      absl::Status status;
      int calls = 0;
      auto recv = [&] {
        r->RecvAsync("k", recv_end,
                     [&](const absl::Status& s, const Args&, const Args&, const Tensor&, bool) {
                       status = s;
                       ++calls;
                     });
      };
      if (!send_first) recv();
      EXPECT_TRUE(r->Send("k", send_end, Tensor::Scalar<float>(1), false).ok());
      if (send_first) recv();
      ASSERT_EQ(calls, 1);
      EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented) << status;
      EXPECT_NE(status.message().find("device:GPU:0"), absl::string_view::npos) << status;
      EXPECT_NE(status.message().find("device:CPU:0"), absl::string_view::npos) << status;
    }
  }
}

// A rendezvous that knows its worker's devices refuses keys made for
// another incarnation of one of them, at either end, naming the device.
TEST(LocalRendezvousTest, KeysOfAnotherIncarnationAreRefusedNamingTheDevice) {
  const std::string cpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
  const std::string cpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";
  auto r = NewLocalRendezvous(
      std::make_shared<const DeviceIncarnations>(DeviceIncarnations{{cpu0, 0x1234}}));
  const std::string stale = CreateRendezvousKey(cpu0, 0x9999, cpu1, "t", 0, 0);
  const absl::Status sent = r->Send(stale, {}, Tensor::Scalar<float>(1), false);
  EXPECT_EQ(sent.code(), absl::StatusCode::kFailedPrecondition) << sent;
  EXPECT_NE(sent.message().find(cpu0), absl::string_view::npos) << sent;
  absl::Status received;
  int calls = 0;
  r->RecvAsync(stale, {},
               [&](const absl::Status& s, const Args&, const Args&, const Tensor&, bool) {
                 received = s;
                 ++calls;
               });
  ASSERT_EQ(calls, 1);  // at once: it would never be matched
  EXPECT_EQ(received.code(), absl::StatusCode::kFailedPrecondition) << received;
  EXPECT_NE(received.message().find(cpu0), absl::string_view::npos) << received;

  // The live incarnation passes, and so does a device of another worker.
  for (const std::string& key :
       {CreateRendezvousKey(cpu0, 0x1234, cpu1, "t", 0, 0),
        CreateRendezvousKey("/job:worker/replica:0/task:1/device:CPU:0", 0x77, cpu1, "t", 0, 0)}) {
    ASSERT_TRUE(r->Send(key, {}, Tensor::Scalar<float>(2), false).ok()) << key;
    float got = 0;
    r->RecvAsync(key, {},
                 [&](const absl::Status& s, const Args&, const Args&, const Tensor& v, bool) {
                   ASSERT_TRUE(s.ok()) << s;
                   got = v.scalar<float>();
                 });
    EXPECT_EQ(got, 2.0f) << key;
  }
  // A key that is not one.
  EXPECT_EQ(r->Send("k", {}, Tensor::Scalar<float>(1), false).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace graphrun
