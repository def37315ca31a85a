// Chrome trace JSON (Trace Event Format) from StepStats: opens in Perfetto
// and chrome://tracing. One process track per device, one complete ("X")
// slice per node, overlapping nodes on separate lanes, and flow arrows for
// tensors that cross devices. Stateless; thread-safe.
#ifndef GRAPHRUN_RUNTIME_TRACE_H_
#define GRAPHRUN_RUNTIME_TRACE_H_

#include <string>

#include "runtime/protos/step_stats.pb.h"

namespace graphrun {

std::string StepStatsToChromeTrace(const StepStats& stats);

}  // namespace graphrun

#endif  // GRAPHRUN_RUNTIME_TRACE_H_
