// Ops for runtime tests (registered by linking :test_ops; see test_ops.cc
// for each op's contract), and what they record.
#ifndef GRAPHRUN_RUNTIME_TESTING_TEST_OPS_H_
#define GRAPHRUN_RUNTIME_TESTING_TEST_OPS_H_

#include <string>
#include <vector>

namespace graphrun {
namespace test_ops {

// The node names of the TestRecord kernels that ran, in the order they
// ran (one shared, mutex-ordered sequence across devices), since the last
// call; clears it. Thread-safe.
std::vector<std::string> TakeRecordedOrder();

// Returns once a TestBlockedConstruction kernel's constructor is waiting.
void AwaitBlockedConstruction();
// Lets every TestBlockedConstruction constructor, waiting or to come, go on.
void ReleaseConstruction();

}  // namespace test_ops
}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_TESTING_TEST_OPS_H_
