// `graphrun partition`: places a graph (as `graphrun place` does) and cuts it
// into one GraphDef per device joined by _Send/_Recv pairs; writes each as a
// text GraphDef and the placed graph as a DOT picture.
#ifndef GRAPHRUN_TOOLS_PARTITION_COMMAND_H_
#define GRAPHRUN_TOOLS_PARTITION_COMMAND_H_

#include <string>

#include "tools/place_command.h"

namespace graphrun {

struct PartitionCommandArgs {
  PlaceCommandArgs place;
  std::string out_dir;
  // none | fp16 | bf16: float edges between tasks travel compressed.
  std::string wire_compression = "none";
};

int PartitionCommand(const PartitionCommandArgs& args);

}  // namespace graphrun

#endif  // GRAPHRUN_TOOLS_PARTITION_COMMAND_H_
