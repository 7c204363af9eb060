/* Stands in for <iostream> in libfacedetection (build.sh swaps the include): its error messages go nowhere, so the
 * module links without libc++'s streams and locales (262 KB instead of 470 KB). A failure still returns no faces. */
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
