/*
 * Animations: a frame source yields each frame as the whole canvas, composited as a viewer shows it (the earlier
 * frames' disposal and blending applied), one at a time; each canvas then goes through the row pipeline
 * (frames.c: px_frame, the transforms, px_to_frame) into the animated WebP writer (anim_webp.c). What is held is
 * a few canvases and the encoder's state, never every frame.
 */
#ifndef FRAMES_H
#define FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline.h"

typedef struct Frames Frames;

struct Frames {
  int width, height;
  /* The next frame's canvas (RGBA, width x height; valid until the next call) and how long it shows, in ms; NULL after the last. */
  const uint8_t *(*next)(Frames *self, int *duration_ms);
  void (*close)(Frames *self);
};

Frames *gif_frames(size_t size, int width, int height); /* anim_gif.c: read from JS */
Frames *webp_frames(const uint8_t *data, size_t size);  /* anim_webp.c: libwebp's WebPAnimDecoder over a copy in the instance */
int webp_frames_loop(Frames *frames);                    /* the file's loop count (0: forever) */

/* anim_webp.c: WebPAnimEncoder, a canvas of `width` x `height` at a time. */
void anim_start(int width, int height, int loop, float quality, int method, int lossless);
void anim_sink(Rows *in, int timestamp_ms); /* reads every row of `in` as the frame shown from timestamp_ms, then closes it */
size_t anim_finish(int end_ms);            /* the file at lean_output(); returns its size */

#endif
