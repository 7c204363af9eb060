/*
 * WebP input for the lean codec: libwebp's own decoder (src/dec), writing rows top to bottom straight
 * into buffers of the instance: RGBA that JS reads in place (as jd_decode's), the WebP encoder's YUV
 * planes, or its own YUV planes that the row pipeline reads RGBA rows from (webp_rows). jSquash's decoder, used before, held the decoded
 * image twice (its own and the copy handed to JS).
 *
 * The decoder is libwebp's incremental one, fed from the whole file already in memory (WebPIUpdate:
 * no copy of the bitstream), so it produces bands of rows in order and says after each how far it
 * got. wd_rows is that row source; wd_decode, the whole image, is wd_rows into one buffer.
 * An animated WebP arrives here as its first frame, already cut out as a still (webp-frame.ts).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colour.h"
#include "lean.h"
#include "pipeline.h"
#include "src/dsp/yuv.h"
#include "src/webp/decode.h"
#include "src/webp/encode.h"

static WebPBitstreamFeatures features;
static const uint8_t *source;
static size_t source_size;

static const char *status_message(VP8StatusCode status) {
  switch (status) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid decoding parameters";
    case VP8_STATUS_BITSTREAM_ERROR: return "the bitstream is corrupt";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "a feature libwebp does not support";
    case VP8_STATUS_SUSPENDED: return "the data ends before the image does";
    case VP8_STATUS_USER_ABORT: return "decoding was aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "the data ends before the image does";
    default: return "decoding failed";
  }
}

static void check(VP8StatusCode status) {
  if (status != VP8_STATUS_OK) fail(status_message(status));
}

/* An extended WebP's ICCP chunk (it follows VP8X, before the image), for colour.c. */
static void read_colour(const uint8_t *data, size_t len) {
  colour_reset();
  if (len < 30 || memcmp(data + 12, "VP8X", 4)) return;
  for (size_t at = 12; at + 8 <= len;) {
    const size_t size = data[at + 4] | data[at + 5] << 8 | data[at + 6] << 16 | (size_t)data[at + 7] << 24;
    if (size > len - at - 8) return;
    if (!memcmp(data + at, "ICCP", 4)) {
      colour_set_icc(data + at + 8, size);
      return;
    }
    at += 8 + size + (size & 1);
  }
}

/**
 * Read the headers of `len` bytes of WebP at `data` (which must stay alive while decoding). The
 * bitstream's own size: wd_width/wd_height.
 */
EXPORT(wd_open) void wd_open(const uint8_t *data, size_t len) {
  /*
   * WebPDecode refuses a file shorter than its RIFF size; the incremental decoder waits for the rest
   * instead, and if what is missing is only the end of the last partition it finishes without it.
   */
  if (len >= 12 && !memcmp(data, "RIFF", 4) && (data[4] | data[5] << 8 | data[6] << 16 | (size_t)data[7] << 24) > len - 8) {
    fail(status_message(VP8_STATUS_NOT_ENOUGH_DATA));
  }
  check(WebPGetFeatures(data, len, &features));
  if (features.has_animation) fail("an animated WebP reached the still decoder");
  read_colour(data, len);
  source = data;
  source_size = len;
}

EXPORT(wd_width) int wd_width(void) { return features.width; }
EXPORT(wd_height) int wd_height(void) { return features.height; }

/* Told of each band of rows [first, first + count) as soon as the decoder has finished it. */
typedef void (*RowsDone)(void *context, int first, int count);

/*
 * The row source: decode the opened image into `config->output` (external memory the caller set up:
 * RGBA, RGB or YUV planes, at the size config->options asks for), rows in order; `done` (may be NULL)
 * hears of each finished band. The bitstream is handed over `slice` bytes more at a time (0: all at
 * once), which is how many bands there are: the decoder stops where its data ends and resumes there.
 */
static void wd_rows(WebPDecoderConfig *config, size_t slice, RowsDone done, void *context) {
  config->output.is_external_memory = 1;
  WebPIDecoder *decoder = WebPIDecode(NULL, 0, config);
  if (!decoder) fail("out of memory");
  int rows = 0;
  size_t fed = 0;
  VP8StatusCode status = VP8_STATUS_SUSPENDED;
  while (status == VP8_STATUS_SUSPENDED && fed < source_size) {
    fed = slice && source_size - fed > slice ? fed + slice : source_size;
    status = WebPIUpdate(decoder, source, fed);
    int last = 0;
    if (status == VP8_STATUS_OK || status == VP8_STATUS_SUSPENDED) {
      const int ready = WebPIsRGBMode(config->output.colorspace) ? WebPIDecGetRGB(decoder, &last, NULL, NULL, NULL) != NULL
                                                                 : WebPIDecGetYUVA(decoder, &last, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) != NULL;
      if (ready && last > rows) {
        if (done) done(context, rows, last - rows);
        rows = last;
      }
    }
  }
  WebPIDelete(decoder);
  /* Out of data before the last row: a truncated file, which the incremental decoder would wait on. */
  check(status);
}

static void init_config(WebPDecoderConfig *config, WEBP_CSP_MODE mode) {
  if (!WebPInitDecoderConfig(config)) fail("libwebp version mismatch");
  config->output.colorspace = mode;
}

/*
 * The opened image as `channels` (3 RGB, 4 RGBA, not premultiplied) bytes a pixel at `width` x
 * `height` (smaller than the stored size: libwebp's rescaler, which averages the rows it is given
 * as they come), in a new buffer.
 */
static uint8_t *decode_packed(int channels, int width, int height) {
  const int stride = width * channels;
  WebPDecoderConfig config;
  init_config(&config, channels == 4 ? MODE_RGBA : MODE_RGB);
  if (width != features.width || height != features.height) {
    config.options.use_scaling = 1;
    config.options.scaled_width = width;
    config.options.scaled_height = height;
  }
  config.output.u.RGBA.rgba = lean_alloc((size_t)stride * height);
  config.output.u.RGBA.stride = stride;
  config.output.u.RGBA.size = (size_t)stride * height;
  wd_rows(&config, 0, NULL, NULL);
  return config.output.u.RGBA.rgba;
}

/**
 * Decode the opened image into a new RGBA buffer (4 bytes a pixel) of `width` x `height` (the stored
 * size, or smaller: shrink-on-load, as a JPEG's scaled DCT) and return it; JS reads it in place. The
 * one full-size copy of the pixels.
 */
EXPORT(wd_decode) uint8_t *wd_decode(int width, int height) { return decode_packed(4, width, height); }

/**
 * The decode step of WebP -> lossy WebP: the opened (opaque) image's YUV 4:2:0 straight into the
 * encoder's planes, which are what a lossy WebP stores, so nothing is converted and no RGB exists.
 * webp_encode then encodes them.
 */
EXPORT(wd_to_yuv) void wd_to_yuv(void) {
  WebPPicture *picture = lean_yuv_picture(features.width, features.height);
  WebPDecoderConfig config;
  init_config(&config, MODE_YUV);
  WebPYUVABuffer *planes = &config.output.u.YUVA;
  const size_t uv_rows = (size_t)(features.height + 1) / 2;
  planes->y = picture->y;
  planes->y_stride = picture->y_stride;
  planes->y_size = (size_t)picture->y_stride * features.height;
  planes->u = picture->u;
  planes->v = picture->v;
  planes->u_stride = planes->v_stride = picture->uv_stride;
  planes->u_size = planes->v_size = (size_t)picture->uv_stride * uv_rows;
  wd_rows(&config, 0, NULL, NULL);
}

/* ---------------------------------------------------------------- as a row source */

/*
 * A lossy WebP at its own size: its YUV 4:2:0 planes (and alpha) decoded once, 1.5-2.5 B/px instead of
 * RGBA's 4, each RGBA row made when it is pulled, chroma upsampled as libwebp's "fancy" upsampler does
 * (each chroma sample weighted 9:3:3:1 with its neighbours).
 */
typedef struct {
  Rows rows;
  uint8_t *y, *u, *v, *a, *row;
  int uv_width, uv_height, at;
  uint16_t *near_far; /* one row of 3 near + 1 far chroma, for U then V */
} YuvRows;

static const uint8_t *yuv_next(Rows *self) {
  YuvRows *s = (YuvRows *)self;
  const int y = s->at++, w = self->width, cw = s->uv_width;
  const int cy = y >> 1;
  int far = y & 1 ? cy + 1 : cy - 1;
  if (far < 0) far = 0;
  if (far >= s->uv_height) far = s->uv_height - 1;
  uint16_t *tu = s->near_far, *tv = s->near_far + cw;
  for (int j = 0; j < cw; j++) {
    tu[j] = (uint16_t)(3 * s->u[(size_t)cy * cw + j] + s->u[(size_t)far * cw + j]);
    tv[j] = (uint16_t)(3 * s->v[(size_t)cy * cw + j] + s->v[(size_t)far * cw + j]);
  }
  const uint8_t *luma = s->y + (size_t)y * w;
  for (int x = 0; x < w; x++) {
    const int j = x >> 1;
    int k = x & 1 ? j + 1 : j - 1;
    if (k < 0) k = 0;
    if (k >= cw) k = cw - 1;
    const int u = (3 * tu[j] + tu[k] + 8) >> 4, v = (3 * tv[j] + tv[k] + 8) >> 4;
    VP8YuvToRgb(luma[x], u, v, s->row + 4 * x);
    s->row[4 * x + 3] = s->a ? s->a[(size_t)y * w + x] : 255;
  }
  return s->row;
}

static void yuv_close(Rows *self) {
  YuvRows *s = (YuvRows *)self;
  free(s->y);
  free(s->u);
  free(s->v);
  free(s->a);
  free(s->row);
  free(s->near_far);
  free(self);
}

static Rows *yuv_rows(void) {
  const int w = features.width, h = features.height;
  YuvRows *s = (YuvRows *)rows_stage(sizeof(YuvRows), w, h, yuv_next, yuv_close);
  s->uv_width = (w + 1) / 2;
  s->uv_height = (h + 1) / 2;
  const size_t uv_size = (size_t)s->uv_width * s->uv_height;
  WebPDecoderConfig config;
  init_config(&config, features.has_alpha ? MODE_YUVA : MODE_YUV);
  WebPYUVABuffer *planes = &config.output.u.YUVA;
  planes->y = s->y = lean_alloc((size_t)w * h);
  planes->y_stride = w;
  planes->y_size = (size_t)w * h;
  planes->u = s->u = lean_alloc(uv_size);
  planes->v = s->v = lean_alloc(uv_size);
  planes->u_stride = planes->v_stride = s->uv_width;
  planes->u_size = planes->v_size = uv_size;
  if (features.has_alpha) {
    planes->a = s->a = lean_alloc((size_t)w * h);
    planes->a_stride = w;
    planes->a_size = (size_t)w * h;
  }
  wd_rows(&config, 0, NULL, NULL);
  s->row = lean_alloc((size_t)w * 4);
  s->near_far = lean_alloc(sizeof(uint16_t) * 2 * (size_t)s->uv_width);
  s->rows.alpha = features.has_alpha;
  return &s->rows;
}

/*
 * The opened (still) WebP's rows at `width` x `height`: a lossy one at its own size from its YUV planes;
 * a lossless one (whose decoder holds the whole ARGB image anyway) or a shrunk one as RGBA decoded once.
 */
Rows *webp_rows(int width, int height) {
  const int lossy = features.format == 1;
  if (lossy && width == features.width && height == features.height) return yuv_rows();
  return rows_from_buffer(decode_packed(4, width, height), width, height, features.has_alpha, 0);
}
