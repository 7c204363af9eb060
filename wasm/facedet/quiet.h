/* Stands in for <iostream> in libfacedetection (build.sh swaps the include): its error messages go nowhere, so the
 * module links without libc++'s streams and locales (302 KB instead of about 470). An allocation the CNN cannot get
 * still ends in a trap (it writes through the null pointer), which wasm/faces.ts takes as no faces. */
#ifndef IMGEDGE_QUIET_H
#define IMGEDGE_QUIET_H
#include <stdio.h>
#include <stdlib.h>
struct QuietStream {
  template <class T> const QuietStream &operator<<(const T &) const { return *this; }
};
static const QuietStream quiet_stream = {};
static const char quiet_end = '\n';
#endif
