/*
 * wasi-libc has no setjmp/longjmp. libaom wraps its encoder calls in setjmp() and leaves them through
 * longjmp() from aom_internal_error() when something fails (out of memory, mostly). Here setjmp()
 * always returns 0, and longjmp() ends in avif_sink.c's handler, which throws out of the instance
 * through the `fail` import; the instance is then abandoned, never resumed.
 */
#ifndef IMGEDGE_SETJMP_SHIM_H
#define IMGEDGE_SETJMP_SHIM_H
typedef int jmp_buf[1];
_Noreturn void imgedge_longjmp(int *env, int value);
#define setjmp(env) 0
#define longjmp(env, value) imgedge_longjmp((env), (value))
#endif
