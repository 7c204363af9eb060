/* What lean.c shares with the module's other files (resample.c, png.c). */
#ifndef LEAN_H
#define LEAN_H

#include <stddef.h>
#include <stdint.h>

/* A function JS calls, under its own name. */
#define EXPORT(name) __attribute__((export_name(#name)))

/* Throw `message` through the `fail` import; the instance is abandoned, so this never returns. */
__attribute__((noreturn)) void fail(const char *message);

/* malloc that fails through the `fail` import instead of returning NULL. */
void *lean_alloc(size_t size);

/* Make `size` bytes at `bytes` the result JS reads with lean_output/lean_output_size. */
void lean_set_output(uint8_t *bytes, size_t size);

/* The encoder's picture (lean.c), allocated as YUV 4:2:0 planes of `width` x `height`, for a decoder to fill. */
struct WebPPicture *lean_yuv_picture(int width, int height);

/* Every row of `in` into `to`'s ARGB (allocated at the rows' size, use_argb); returns 1 if a pixel is transparent (lean.c). */
struct Rows;
int rows_to_argb(struct Rows *in, struct WebPPicture *to);

/* MozJPEG: `width` x `height` pixels of `channels` bytes each as JPEG (lean.c). Returns the size. */
size_t jpeg_encode(const uint8_t *pixels, int width, int height, int channels, int quality, int progressive, int optimize, int mozjpeg);

#endif
