/*
 * What gif_dec.c (the first frame) and anim_gif.c (every frame) share, defined in gif_dec.c: a GIF read from JS (the
 * `read_input` import) through a buffer, for giflib's DGifOpen, so the request body is never copied whole into the
 * instance; the failure with giflib's reason; a colour table as RGBA.
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

/* Fail with giflib's reason when it has one, else `what`. */
__attribute__((noreturn)) void gif_fail(const GifFileType *gif, const char *what);

/* `map` as RGBA by index (indices past the table opaque black); returns 1 if every colour of the table is grey. */
int gif_palette(const ColorMapObject *map, uint8_t palette[256][4]);

#endif
