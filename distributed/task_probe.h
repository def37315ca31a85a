// Which tasks of a cluster still answer: what recovery with the remaining
// workers asks after a step failed because a task went away.
#ifndef GRAPHRUN_DISTRIBUTED_TASK_PROBE_H_
#define GRAPHRUN_DISTRIBUTED_TASK_PROBE_H_

#include <map>
#include <string>

#include "absl/time/time.h"
#include "distributed/worker.h"

namespace graphrun {

// Asks every task of `cluster` (task name -> "host:port") for its status at
// once and returns those that do not answer within `timeout`, or answer as
// another task: task name -> why (a message that names the task). A task whose address refuses connections
// fails at once; one that is up answers at once.
std::map<std::string, std::string> UnreachableTasks(
    const std::map<std::string, std::string>& cluster, const ConnectFn& connect,
    absl::Duration timeout);

}  // namespace graphrun

#endif  // GRAPHRUN_DISTRIBUTED_TASK_PROBE_H_
