/*
 * wasi-libc (Debian 12) has no threads. dav1d and libavif include pthread.h (wasm/lean: the AVIF decoder;
 * wasm/avif: libavif's YUV conversion, which the encoder never runs threaded); both are run with one thread
 * (libavif's maxThreads = 1 opens dav1d with n_threads = 1 and no frame delay, which starts no worker), so a
 * thread can never be started here, and locks and conditions have nothing to wait for.
 */
#ifndef IMGEDGE_PTHREAD_SHIM_H
#define IMGEDGE_PTHREAD_SHIM_H
#include <stddef.h>
typedef int pthread_t;
typedef int pthread_attr_t;
typedef int pthread_mutex_t;
typedef int pthread_cond_t;
typedef int pthread_once_t;
#define PTHREAD_ONCE_INIT 0
#define PTHREAD_MUTEX_INITIALIZER 0
static inline int pthread_attr_init(pthread_attr_t *a) { (void)a; return 0; }
static inline int pthread_attr_destroy(pthread_attr_t *a) { (void)a; return 0; }
static inline int pthread_attr_setstacksize(pthread_attr_t *a, size_t s) { (void)a, (void)s; return 0; }
static inline int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*f)(void *), void *p) { (void)t, (void)a, (void)f, (void)p; return 11; /* EAGAIN */ }
static inline int pthread_join(pthread_t t, void **r) { (void)t, (void)r; return 3; /* ESRCH */ }
static inline int pthread_mutex_init(pthread_mutex_t *m, const void *a) { (void)m, (void)a; return 0; }
static inline int pthread_mutex_destroy(pthread_mutex_t *m) { (void)m; return 0; }
static inline int pthread_mutex_lock(pthread_mutex_t *m) { (void)m; return 0; }
static inline int pthread_mutex_unlock(pthread_mutex_t *m) { (void)m; return 0; }
static inline int pthread_cond_init(pthread_cond_t *c, const void *a) { (void)c, (void)a; return 0; }
static inline int pthread_cond_destroy(pthread_cond_t *c) { (void)c; return 0; }
static inline int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m) { (void)c, (void)m; return 0; }
static inline int pthread_cond_signal(pthread_cond_t *c) { (void)c; return 0; }
static inline int pthread_cond_broadcast(pthread_cond_t *c) { (void)c; return 0; }
static inline int pthread_once(pthread_once_t *o, void (*f)(void)) { if (!*o) { *o = 1; f(); } return 0; }
#endif
