/*
 * The calls JS makes for an animation (src/pipeline/frames.ts): open a frame source (fr_gif, fr_webp), start the
 * writer (fr_start), then for each frame fr_next, the row pipeline from its canvas (px_frame in pipeline.c, the
 * transforms, px_to_frame), and at the end fr_finish.
 */
#include "frames.h"
#include "lean.h"

static Frames *source;
static const uint8_t *canvas;
static int is_webp;

EXPORT(fr_gif) void fr_gif(size_t size, int width, int height) {
  source = gif_frames(size, width, height);
  is_webp = 0;
}
/* `data` is a copy of the file in the instance, kept until the animation is finished. */
EXPORT(fr_webp) void fr_webp(const uint8_t *data, size_t size) {
  source = webp_frames(data, size);
  is_webp = 1;
}
EXPORT(fr_width) int fr_width(void) { return source->width; }
EXPORT(fr_height) int fr_height(void) { return source->height; }
/* An animated WebP's loop count (a GIF's is read from its header in JS). */
EXPORT(fr_loop) int fr_loop(void) { return is_webp ? webp_frames_loop(source) : 0; }

/* The next frame onto the canvas: how long it shows, in ms, or -1 after the last (the source is then closed). */
EXPORT(fr_next) int fr_next(void) {
  if (!source) fail("no animation is open");
  int duration = 0;
  canvas = source->next(source, &duration);
  if (canvas) return duration;
  source->close(source);
  source = NULL;
  return -1;
}

/* The frame fr_next composited, as a row source (left to the frame source). */
Rows *frame_rows(void) {
  if (!source || !canvas) fail("no frame");
  return rows_of_buffer(canvas, source->width, source->height, 1);
}

EXPORT(fr_start) void fr_start(int width, int height, int loop, float quality, int method, int lossless) { anim_start(width, height, loop, quality, method, lossless); }
EXPORT(fr_finish) size_t fr_finish(int end_ms) { return anim_finish(end_ms); }
