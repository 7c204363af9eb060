/*
 * libpng's error and warning handlers, shared by the lean codec's PNG reader (png.c, which defines them)
 * and writer (sink_png.c). Errors end in `fail`, never in a return to libpng (wasi-libc has no longjmp);
 * warnings (a bad ancillary chunk, which is then skipped) are not fatal, as in libpng's default.
 */
#ifndef PNG_HANDLERS_H
#define PNG_HANDLERS_H

#include "png.h"

__attribute__((noreturn)) void lean_png_error(png_structp png, png_const_charp message);
void lean_png_warning(png_structp png, png_const_charp message);

#endif
