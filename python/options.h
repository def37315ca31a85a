// Session options from Python keyword arguments: the names and meanings of
// `graphrun run`'s flags (RunCommandArgs), so a Python session is made
// exactly as the CLI makes one.
#ifndef GRAPHRUN_PYTHON_OPTIONS_H_
#define GRAPHRUN_PYTHON_OPTIONS_H_

#include <string>
#include <vector>

#include "pybind11/pybind11.h"
#include "tools/run_command.h"

namespace graphrun {
namespace python {

// The arguments for `options` (name -> value). An unknown name is a
// TypeError listing the known ones; a value of the wrong type is a
// TypeError naming the option. Defaults are the CLI's, except `quiet`
// (true: notes such as "running on CPU" are not printed).
RunCommandArgs ArgsFromOptions(const pybind11::dict& options);

// Every option name, sorted.
std::vector<std::string> OptionNames();

}  // namespace python
}  // namespace graphrun

#endif  // GRAPHRUN_PYTHON_OPTIONS_H_
