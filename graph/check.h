// GR_CHECK: aborts on a programmer error (never on user input, which gets a
// Status). Debian's Abseil predates absl/log, hence this one macro.
#ifndef GRAPHRUN_GRAPH_CHECK_H_
#define GRAPHRUN_GRAPH_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define GR_CHECK(cond)                                                  \
  do {                                                                  \
    if (!(cond)) {                                                      \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                   #cond);                                              \
      std::abort();                                                     \
    }                                                                   \
  } while (0)

#endif  // GRAPHRUN_GRAPH_CHECK_H_
