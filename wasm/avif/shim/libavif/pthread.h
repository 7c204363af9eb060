/*
 * wasi-libc (Debian 12) has no threads. libavif's reformat.c includes pthread.h for its multi-threaded
 * YUV -> RGB conversion, which the encoder never runs; here a thread can never be started, so it would
 * do the work on the calling thread.
 */
#ifndef IMGEDGE_PTHREAD_SHIM_H
#define IMGEDGE_PTHREAD_SHIM_H
typedef int pthread_t;
typedef int pthread_attr_t;
static inline int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
  (void)thread, (void)attr, (void)start, (void)arg;
  return 11; /* EAGAIN */
}
static inline int pthread_join(pthread_t thread, void **result) {
  (void)thread, (void)result;
  return 3; /* ESRCH */
}
#endif
