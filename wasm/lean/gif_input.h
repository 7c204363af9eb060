/*
 * A GIF read from JS (the `read_input` import) through a buffer, for giflib's DGifOpen: the request body is
 * never copied whole into the instance. gif_dec.c (the first frame) and anim_gif.c (every frame) share it.
 */
#ifndef GIF_INPUT_H
#define GIF_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "gif_lib.h"

typedef struct {
  size_t file_size, file_at; /* what JS has handed over so far */
  uint8_t *buffer;           /* a window of the file */
  size_t buffered, buffer_used;
} GifInput;

/* A reader over a file of `size` bytes. */
void gif_input_init(GifInput *in, size_t size);

/* giflib's read function: UserData is the GifInput. Stops at the end of the file. */
int gif_input_read(GifFileType *gif, GifByteType *out, int length);

#endif
