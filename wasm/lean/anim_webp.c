/*
 * Animated WebP in and out, with libwebp's own animation code: WebPAnimDecoder composites each frame on the canvas
 * (blending, disposal) from a copy of the file in the instance, its ICC profile handed to colour.c; WebPAnimEncoder takes whole canvases and writes each
 * as the sub-rectangle that changed, choosing per frame between disposing to the background or not, and keeps two
 * candidate frames at a time (key frames off, libwebp's default: frames only ever refer to the previous one).
 */
#include <stdlib.h>
#include <string.h>

#include "colour.h"
#include "frames.h"
#include "lean.h"
#include "src/webp/demux.h"
#include "src/webp/encode.h"
#include "src/webp/mux.h"

typedef struct {
  Frames frames;
  WebPAnimDecoder *decoder;
  int loop, last_ms;
} WebpFrames;

static const uint8_t *webp_frames_next(Frames *self, int *duration_ms) {
  WebpFrames *w = (WebpFrames *)self;
  if (!WebPAnimDecoderHasMoreFrames(w->decoder)) return NULL;
  uint8_t *canvas;
  int end_ms;
  if (!WebPAnimDecoderGetNext(w->decoder, &canvas, &end_ms)) fail("a WebP frame could not be decoded");
  *duration_ms = end_ms - w->last_ms;
  w->last_ms = end_ms;
  return canvas;
}

static void webp_frames_close(Frames *self) {
  WebpFrames *w = (WebpFrames *)self;
  WebPAnimDecoderDelete(w->decoder);
  free(w);
}

/* An animated WebP at `data` (which must stay until close): libwebp's demuxer checks every frame lies on the canvas. */
Frames *webp_frames(const uint8_t *data, size_t size) {
  WebpFrames *w = lean_alloc(sizeof(WebpFrames));
  memset(w, 0, sizeof(WebpFrames));
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options)) fail("libwebp version mismatch");
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  const WebPData file = {data, size};
  w->decoder = WebPAnimDecoderNew(&file, &options);
  if (!w->decoder) fail("the animated WebP is truncated or corrupt");
  /* its ICC profile, for the frames' colours to sRGB (px_colour), as webp_dec.c does for a still */
  colour_reset();
  WebPChunkIterator icc;
  if (WebPDemuxGetChunk(WebPAnimDecoderGetDemuxer(w->decoder), "ICCP", 1, &icc)) colour_set_icc(icc.chunk.bytes, icc.chunk.size);
  WebPDemuxReleaseChunkIterator(&icc);
  WebPAnimInfo info;
  if (!WebPAnimDecoderGetInfo(w->decoder, &info)) fail("the animated WebP is corrupt");
  w->frames.width = (int)info.canvas_width;
  w->frames.height = (int)info.canvas_height;
  w->frames.next = webp_frames_next;
  w->frames.close = webp_frames_close;
  w->loop = (int)info.loop_count;
  return &w->frames;
}

int webp_frames_loop(Frames *frames) { return ((WebpFrames *)frames)->loop; }

/* ---------------------------------------------------------------- the writer */

static WebPAnimEncoder *encoder;
static WebPConfig config;

static __attribute__((noreturn)) void encoder_fail(const char *what) {
  const char *reason = encoder ? WebPAnimEncoderGetError(encoder) : NULL;
  fail(reason && *reason ? reason : what);
}

/* lossy: quality 0-100; lossless: quality is the compression effort 0-100; method 0-6; loop 0 (forever) to 65535. */
void anim_start(int width, int height, int loop, float quality, int method, int lossless) {
  WebPAnimEncoderOptions options;
  if (!WebPAnimEncoderOptionsInit(&options) || !WebPConfigInit(&config)) fail("libwebp version mismatch");
  options.anim_params.loop_count = loop;
  options.anim_params.bgcolor = 0; /* transparent: what the GIF and WebP sources start their canvases with */
  config.lossless = lossless;
  config.quality = quality;
  config.method = method;
  if (!WebPValidateConfig(&config)) fail("invalid WebP settings");
  encoder = WebPAnimEncoderNew(width, height, &options);
  if (!encoder) fail("out of memory");
}

void anim_sink(Rows *in, int timestamp_ms) {
  if (!encoder) fail("no animation started");
  WebPPicture frame;
  if (!WebPPictureInit(&frame)) fail("libwebp version mismatch");
  frame.use_argb = 1;
  frame.width = in->width;
  frame.height = in->height;
  if (!WebPPictureAlloc(&frame)) fail("out of memory");
  rows_to_argb(in, &frame);
  in->close(in);
  const int added = WebPAnimEncoderAdd(encoder, &frame, timestamp_ms, &config);
  WebPPictureFree(&frame);
  if (!added) encoder_fail("a frame could not be encoded");
}

size_t anim_finish(int end_ms) {
  if (!encoder) fail("no animation started");
  WebPData file;
  WebPDataInit(&file);
  if (!WebPAnimEncoderAdd(encoder, NULL, end_ms, NULL) || !WebPAnimEncoderAssemble(encoder, &file)) encoder_fail("the animation could not be assembled");
  WebPAnimEncoderDelete(encoder);
  encoder = NULL;
  lean_set_output((uint8_t *)file.bytes, file.size);
  return file.size;
}
