/*
 * The row pipeline (pipeline.h), and the calls JS builds one with: a source (px_jpeg, px_png,
 * px_webp, px_gif, px_avif, px_pixels), then the transforms the geometry asks for, in order (px_orient, px_crop, px_resize, px_pad,
 * px_flatten), then one sink (px_to_jpeg, px_to_webp + webp_encode, px_png_analyse + px_to_png, px_webpll_analyse + px_webpll_count + px_to_webpll, px_avif_rows + ae_finish, px_to_rgba), which
 * pulls every row through (PNG's sink, twice: px_png_analyse, then px_to_png). One pipeline at a time, as everything in the lean codec.
 */
#include <stdlib.h>
#include <string.h>
#include <wasm_simd128.h>

#include "lean.h"
#include "colour.h"
#include "pipeline.h"

Rows *rows_stage(size_t size, int width, int height, const uint8_t *(*next)(Rows *), void (*close)(Rows *)) {
  if (width <= 0 || height <= 0) fail("empty image");
  Rows *stage = lean_alloc(size);
  memset(stage, 0, size);
  stage->width = width;
  stage->height = height;
  stage->next = next;
  stage->close = close;
  return stage;
}

/* ---------------------------------------------------------------- a whole image as a source */

typedef struct {
  Rows rows;
  uint8_t *pixels;
  int y, owned;
} Buffer;

static const uint8_t *buffer_next(Rows *self) {
  Buffer *b = (Buffer *)self;
  if (b->y >= self->height) fail("no more rows");
  return b->pixels + (size_t)b->y++ * self->width * 4;
}

static void buffer_close(Rows *self) {
  if (((Buffer *)self)->owned) free(((Buffer *)self)->pixels);
  free(self);
}

Rows *rows_from_buffer(uint8_t *rgba, int width, int height, int alpha, int grey) {
  Buffer *b = (Buffer *)rows_stage(sizeof(Buffer), width, height, buffer_next, buffer_close);
  b->pixels = rgba;
  b->owned = 1;
  b->rows.alpha = alpha;
  b->rows.grey = grey;
  return &b->rows;
}

Rows *rows_of_buffer(const uint8_t *rgba, int width, int height, int alpha) {
  Rows *rows = rows_from_buffer((uint8_t *)rgba, width, height, alpha, 0);
  ((Buffer *)rows)->owned = 0;
  return rows;
}

/* ---------------------------------------------------------------- transforms */

/* A stage over another, with one row of its own. */
typedef struct {
  Rows rows;
  Rows *in;
  uint8_t *row;
  int x, y, top, left, at;
  uint8_t colour[4];
} Over;

static void over_close(Rows *self) {
  Over *o = (Over *)self;
  o->in->close(o->in);
  free(o->row);
  free(self);
}

static Over *over(Rows *in, int width, int height, const uint8_t *(*next)(Rows *), int own_row) {
  Over *o = (Over *)rows_stage(sizeof(Over), width, height, next, over_close);
  o->in = in;
  o->rows.alpha = in->alpha;
  o->rows.grey = in->grey;
  if (own_row) o->row = lean_alloc((size_t)width * 4);
  return o;
}

/* Rows above the region are read and dropped; each row is the source row from x on, without a copy. */
static const uint8_t *crop_next(Rows *self) {
  Over *o = (Over *)self;
  for (; o->at < o->y; o->at++) o->in->next(o->in);
  o->at++;
  return o->in->next(o->in) + (size_t)o->x * 4;
}

Rows *rows_crop(Rows *in, int x, int y, int width, int height) {
  if (x == 0 && y == 0 && width == in->width && height == in->height) return in;
  if (x < 0 || y < 0 || x + width > in->width || y + height > in->height) fail("crop outside the image");
  Over *o = over(in, width, height, crop_next, 0);
  o->x = x;
  o->y = y;
  return &o->rows;
}

static void fill(uint8_t *row, int width, const uint8_t colour[4]) {
  for (int x = 0; x < width; x++) memcpy(row + 4 * x, colour, 4);
}

/* The image centred on a canvas of `colour`; the borders of the row are filled once, only the middle changes. */
static const uint8_t *pad_next(Rows *self) {
  Over *o = (Over *)self;
  const int y = o->at++;
  if (y < o->top || y >= o->top + o->in->height) {
    if (y == o->top + o->in->height || y == 0) fill(o->row, self->width, o->colour);
    return o->row;
  }
  if (y == o->top) fill(o->row, self->width, o->colour);
  memcpy(o->row + (size_t)o->left * 4, o->in->next(o->in), (size_t)o->in->width * 4);
  return o->row;
}

Rows *rows_pad(Rows *in, int width, int height, const uint8_t colour[4]) {
  if (width == in->width && height == in->height) return in;
  if (width < in->width || height < in->height) fail("padding smaller than the image");
  Over *o = over(in, width, height, pad_next, 1);
  memcpy(o->colour, colour, 4);
  o->left = (width - in->width) / 2;
  o->top = (height - in->height) / 2;
  o->rows.alpha = in->alpha || colour[3] != 255;
  o->rows.grey = in->grey && colour[0] == colour[1] && colour[1] == colour[2];
  return &o->rows;
}

/* Composited over an opaque colour, as transform.ts's flatten did: (c a + bg (255 - a) + 127) / 255. */
static const uint8_t *flatten_next(Rows *self) {
  Over *o = (Over *)self;
  const uint8_t *in = o->in->next(o->in);
  for (int x = 0; x < self->width; x++) {
    const uint8_t *p = in + 4 * x;
    uint8_t *q = o->row + 4 * x;
    const int a = p[3], inv = 255 - a;
    for (int k = 0; k < 3; k++) q[k] = (uint8_t)((p[k] * a + o->colour[k] * inv + 127) / 255);
    q[3] = 255;
  }
  return o->row;
}

Rows *rows_flatten(Rows *in, const uint8_t background[3]) {
  if (!in->alpha) return in;
  Over *o = over(in, in->width, in->height, flatten_next, 1);
  memcpy(o->colour, background, 3);
  o->rows.alpha = 0;
  o->rows.grey = in->grey && background[0] == background[1] && background[1] == background[2];
  return &o->rows;
}

/* A row of `width` pixels in reverse order, four pixels a SIMD vector. */
static void reverse(const uint32_t *in, uint32_t *out, int width) {
  int x = 0;
  for (; x + 4 <= width; x += 4) {
    const v128_t v = wasm_v128_load(in + width - 4 - x);
    wasm_v128_store(out + x, wasm_i32x4_shuffle(v, v, 3, 2, 1, 0));
  }
  for (; x < width; x++) out[x] = in[width - 1 - x];
}

/* EXIF orientation 2, a mirror: each row reversed as it comes, nothing collected. */
static const uint8_t *mirror_next(Rows *self) {
  Over *o = (Over *)self;
  reverse((const uint32_t *)o->in->next(o->in), (uint32_t *)o->row, self->width);
  return o->row;
}

/*
 * EXIF orientation 3-8: rows come out of a file in stored order, so the image is collected once and read back upright.
 * Output pixel (x, y) comes from stored (sx0 + x dx_x + y dx_y, sy0 + x dy_x + y dy_y). Without a quarter turn an output
 * row is a stored row, as it is (4) or reversed (3); with one (5-8) it is a stored column, and a column read a pixel a
 * row apart misses the cache at every pixel: the output is made a band of BAND rows at a time instead, each stored
 * row giving the band BAND pixels side by side, four stored rows of four pixels turned at once (SIMD shuffles).
 */
#define BAND 32

typedef struct {
  Rows rows;
  uint8_t *pixels, *band;
  int stored_width, at;
  int sx0, dx_x, dx_y, sy0, dy_x, dy_y;
} Turned;

/* Four pixels of four stored rows (a, b, c, d: four output columns) as four output rows: a 4x4 transpose. */
static void transpose4(v128_t a, v128_t b, v128_t c, v128_t d, uint32_t *out, int width) {
  const v128_t ab_low = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), ab_high = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
  const v128_t cd_low = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), cd_high = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);
  wasm_v128_store(out, wasm_i32x4_shuffle(ab_low, cd_low, 0, 1, 4, 5));
  wasm_v128_store(out + width, wasm_i32x4_shuffle(ab_low, cd_low, 2, 3, 6, 7));
  wasm_v128_store(out + 2 * (size_t)width, wasm_i32x4_shuffle(ab_high, cd_high, 0, 1, 4, 5));
  wasm_v128_store(out + 3 * (size_t)width, wasm_i32x4_shuffle(ab_high, cd_high, 2, 3, 6, 7));
}

/* Output rows y0 .. y0 + BAND - 1 (fewer at the bottom) of a quarter turn into the band, 4x4 pixels at a time. */
static void turn_band(Turned *t, int y0) {
  const int width = t->rows.width, rows = t->rows.height - y0 < BAND ? t->rows.height - y0 : BAND, step = t->dx_y;
  const uint32_t *src = (const uint32_t *)t->pixels;
  uint32_t *band = (uint32_t *)t->band;
  const int whole_x = width & ~3, whole_j = rows & ~3;
  /* pixel (x, j) of the band is stored pixel (sx0 + (y0 + j) step, sy0 + x dy_x) */
  for (int j = 0; j < whole_j; j += 4) {
    /* the four stored pixels of band rows j .. j + 3, left to right in memory */
    const int first = t->sx0 + (y0 + j) * step - (step < 0 ? 3 : 0);
    for (int x = 0; x < whole_x; x += 4) {
      v128_t v[4];
      for (int k = 0; k < 4; k++) {
        v[k] = wasm_v128_load(src + (size_t)(t->sy0 + (x + k) * t->dy_x) * t->stored_width + first);
        if (step < 0) v[k] = wasm_i32x4_shuffle(v[k], v[k], 3, 2, 1, 0);
      }
      transpose4(v[0], v[1], v[2], v[3], band + (size_t)j * width + x, width);
    }
  }
  /* what is left: the last columns of every row, the last rows whole */
  for (int j = 0; j < rows; j++) {
    for (int x = j < whole_j ? whole_x : 0; x < width; x++) {
      band[(size_t)j * width + x] = src[(size_t)(t->sy0 + x * t->dy_x) * t->stored_width + t->sx0 + (y0 + j) * step];
    }
  }
}

static const uint8_t *turned_next(Rows *self) {
  Turned *t = (Turned *)self;
  const int y = t->at++;
  const uint32_t *src = (const uint32_t *)t->pixels;
  if (t->dx_y == 0) {
    const uint32_t *row = src + (size_t)(t->sy0 + y * t->dy_y) * t->stored_width;
    if (t->dx_x > 0) return (const uint8_t *)row;
    reverse(row, (uint32_t *)t->band, self->width);
    return t->band;
  }
  if (y % BAND == 0) turn_band(t, y);
  return t->band + (size_t)(y % BAND) * self->width * 4;
}

static void turned_close(Rows *self) {
  Turned *t = (Turned *)self;
  free(t->pixels);
  free(t->band);
  free(self);
}

Rows *rows_orient(Rows *in, int orientation) {
  if (orientation < 2 || orientation > 8) return in;
  if (orientation == 2) return &over(in, in->width, in->height, mirror_next, 1)->rows;
  const int w = in->width, h = in->height, swap = orientation >= 5;
  const int alpha = in->alpha, grey = in->grey;
  uint8_t *pixels = rows_collect(in);
  Turned *t = (Turned *)rows_stage(sizeof(Turned), swap ? h : w, swap ? w : h, turned_next, turned_close);
  t->pixels = pixels;
  t->band = lean_alloc((size_t)t->rows.width * 4 * (swap ? BAND : 1));
  t->stored_width = w;
  t->rows.alpha = alpha;
  t->rows.grey = grey;
  /* (sx, sy) for output (x, y), as transform.ts's orient(). */
  switch (orientation) {
    case 3: t->sx0 = w - 1; t->dx_x = -1; t->dx_y = 0; t->sy0 = h - 1; t->dy_x = 0; t->dy_y = -1; break;
    case 4: t->sx0 = 0; t->dx_x = 1; t->dx_y = 0; t->sy0 = h - 1; t->dy_x = 0; t->dy_y = -1; break;
    case 5: t->sx0 = 0; t->dx_x = 0; t->dx_y = 1; t->sy0 = 0; t->dy_x = 1; t->dy_y = 0; break;
    case 6: t->sx0 = 0; t->dx_x = 0; t->dx_y = 1; t->sy0 = h - 1; t->dy_x = -1; t->dy_y = 0; break;
    case 7: t->sx0 = w - 1; t->dx_x = 0; t->dx_y = -1; t->sy0 = h - 1; t->dy_x = -1; t->dy_y = 0; break;
    default: t->sx0 = w - 1; t->dx_x = 0; t->dx_y = -1; t->sy0 = 0; t->dy_x = 1; t->dy_y = 0; break;
  }
  return &t->rows;
}

/* ---------------------------------------------------------------- the whole image as a sink */

uint8_t *rows_collect(Rows *in) {
  const size_t stride = (size_t)in->width * 4;
  uint8_t *pixels = lean_alloc(stride * in->height);
  for (int y = 0; y < in->height; y++) memcpy(pixels + y * stride, in->next(in), stride);
  in->close(in);
  return pixels;
}

/* ---------------------------------------------------------------- JS */

static Rows *pipe;

static Rows *built(void) {
  if (!pipe) fail("no pipeline source");
  return pipe;
}

/* Hands the pipeline to a sink: it is closed by the sink. */
static Rows *take(void) {
  Rows *rows = built();
  pipe = NULL;
  return rows;
}

EXPORT(px_jpeg) void px_jpeg(void) { pipe = jpeg_rows(); }
EXPORT(px_png) void px_png(void) { pipe = png_rows(); }
EXPORT(px_webp) void px_webp(int width, int height) { pipe = webp_rows(width, height); }
EXPORT(px_gif) void px_gif(void) { pipe = gif_rows(); }
EXPORT(px_avif) void px_avif(void) { pipe = avif_rows(); }
EXPORT(px_frame) void px_frame(void) { pipe = frame_rows(); }
/** RGBA pixels that JS keeps (and frees): a source that can be read twice. */
EXPORT(px_pixels) void px_pixels(const uint8_t *rgba, int width, int height, int alpha) { pipe = rows_of_buffer(rgba, width, height, alpha); }
/**
 * Rows collected by px_to_rgba and kept in the instance (gravity=auto's pass, rows.ts: the image resized as the
 * conversion resizes it), read as often as the conversion builds its pipeline, left to the caller (the instance's reset
 * frees it with the rest).
 */
EXPORT(px_kept) void px_kept(const uint8_t *rgba, int width, int height, int grey, int alpha) {
  pipe = rows_of_buffer(rgba, width, height, alpha);
  pipe->grey = grey;
}

/** The source's colours to sRGB (colour.c); 1 if that adds a stage, 0 when they are sRGB already or not described usably. */
EXPORT(px_colour) int px_colour(void) {
  Rows *before = built();
  pipe = rows_colour(before);
  return pipe != before;
}
EXPORT(px_orient) void px_orient(int orientation) { pipe = rows_orient(built(), orientation); }
EXPORT(px_crop) void px_crop(int x, int y, int width, int height) { pipe = rows_crop(built(), x, y, width, height); }
EXPORT(px_resize) void px_resize(int width, int height) { pipe = rows_resize(built(), width, height, built()->alpha); }
EXPORT(px_pad) void px_pad(int width, int height, int r, int g, int b, int a) {
  const uint8_t colour[4] = {(uint8_t)r, (uint8_t)g, (uint8_t)b, (uint8_t)a};
  pipe = rows_pad(built(), width, height, colour);
}
EXPORT(px_flatten) void px_flatten(int r, int g, int b) {
  const uint8_t colour[3] = {(uint8_t)r, (uint8_t)g, (uint8_t)b};
  pipe = rows_flatten(built(), colour);
}

/** Filters after the resample (op_blur.c, op_sharpen.c, op_adjust.c). */
EXPORT(px_blur) void px_blur(double sigma) { pipe = rows_blur(built(), sigma); }
EXPORT(px_sharpen) void px_sharpen(double sigma, double amount) { pipe = rows_sharpen(built(), sigma, amount); }
/** gravity=auto's preview from the rows its pass keeps (op_shrink.c): the mean of factor x factor blocks. */
EXPORT(px_shrink) void px_shrink(int factor) { pipe = rows_shrink(built(), factor); }
EXPORT(px_adjust) void px_adjust(double brightness, double contrast, double gamma, double saturation) {
  pipe = rows_adjust(built(), brightness, contrast, gamma, saturation);
}

EXPORT(px_width) int px_width(void) { return built()->width; }
EXPORT(px_height) int px_height(void) { return built()->height; }
EXPORT(px_alpha) int px_alpha(void) { return built()->alpha; }
EXPORT(px_grey) int px_grey(void) { return built()->grey; }

/** trim=border (op_trim.c): the box inside the rows' uniform border, as x, y, width, height. */
static int32_t box[4];
EXPORT(px_border_box) int32_t *px_border_box(int tolerance) {
  border_box(take(), tolerance, box);
  return box;
}
/** The whole image as RGBA (for the encoders outside the lean codec); JS reads it in place. */
EXPORT(px_to_rgba) uint8_t *px_to_rgba(void) { return rows_collect(take()); }
/** quality=auto (score.c): the tiles of the rows the score is computed on, at `nx` column spans then `ny` row spans (start, length). */
EXPORT(px_mosaic) uint8_t *px_mosaic(const int32_t *spans, int nx, int ny) { return mosaic_sink(take(), spans, nx, spans + 2 * nx, ny); }
/*
 * quality=auto's check (score.c): SSIMULACRA 2 of the answer against the rows it was encoded from. The answer is either
 * decoded whole (`dist`: RGBA of the rows' size, left to the caller) or a pipeline of its own, built first and set aside
 * (px_aside) while the rows' is built; then px_score_aside reads the two together.
 */
static Rows *aside;
EXPORT(px_score) double px_score(const uint8_t *dist, int alpha) {
  Rows *ref = take();
  return score_sink(ref, rows_of_buffer(dist, ref->width, ref->height, alpha), alpha);
}
EXPORT(px_aside) void px_aside(void) { aside = take(); }
EXPORT(px_score_aside) double px_score_aside(int alpha) {
  Rows *ref = take(), *dist = aside;
  if (!dist) fail("no pipeline set aside");
  aside = NULL;
  return score_sink(ref, dist, alpha);
}
EXPORT(px_to_jpeg) size_t px_to_jpeg(int quality, int progressive, int optimize, int mozjpeg) { return jpeg_sink(take(), quality, progressive, optimize, mozjpeg); }
/** Fills the WebP encoder's picture (webp_encode encodes it); returns 1 if any pixel is transparent. */
EXPORT(px_to_webp) int px_to_webp(int lossless) { return webp_sink(take(), lossless); }
/** PNG in two passes over the same rows: px_png_analyse reads them, then JS builds the pipeline again for px_to_png. */
EXPORT(px_png_analyse) void px_png_analyse(void) { png_analyse(take()); }
/** For rows that will be mapped to quant.c's palette: what png_analyse would find, from the palette (the rows are not read). */
EXPORT(px_png_analyse_palette) void px_png_analyse_palette(void) { png_analyse_palette(); }
/** Lossy PNG (quant.c): px_quant_sample reads the rows for a sample, px_quant_build makes the palette, px_remap maps the rows of a pipeline built again to it. */
EXPORT(px_quant_sample) void px_quant_sample(void) { quant_sample(take()); }
EXPORT(px_remap) void px_remap(void) { pipe = rows_remap(built()); }
EXPORT(px_to_png) size_t px_to_png(int level, int strategies) { return png_sink(take(), level, strategies); }
/** Lossless WebP by our own VP8L encoder (sink_webpll.c), in three passes over the same rows, the pipeline built again before each. */
EXPORT(px_webpll_analyse) void px_webpll_analyse(void) { webpll_analyse(take()); }
EXPORT(px_webpll_count) void px_webpll_count(int effort) { webpll_count(take(), effort); }
EXPORT(px_to_webpll) size_t px_to_webpll(int effort) { return webpll_sink(take(), effort); }
/* The rows into the AVIF planes and the pipeline closed, its source's memory given back: ae_finish encodes. */
EXPORT(px_avif_rows) void px_avif_rows(int quality, int speed, int flags) { avif_sink_rows(take(), quality, speed, flags); }
/** One frame of an animated WebP (frames.c), shown from `timestamp_ms`. */
EXPORT(px_to_frame) void px_to_frame(int timestamp_ms) { anim_sink(take(), timestamp_ms); }

