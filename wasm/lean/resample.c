/*
 * Lanczos3 resampling of RGBA pixels for the lean codec, separable and row by row.
 *
 * Why not jSquash's resize (docs/notes/benchmarks.md, "What we tried"): it takes the whole image into its
 * own memory, keeps float copies of it, and ran 4.5-9.6x slower than libvips. Here each source row is
 * turned into floats once, filtered horizontally into a ring of output-width rows, and every output
 * row is a weighted sum of the ring rows it needs. Beyond the source and the output, memory is one
 * float source row, the ring (taps x output width) and the weights. One pixel is one f32x4 (R, G, B, A),
 * so each filter tap is one SIMD multiply-add.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wasm_simd128.h>

#include "lean.h"
#include "pipeline.h"

/* The source pixels that make one output pixel along one axis: `count` taps from `first`. */
typedef struct {
  int first;
  int count;
} Window;

typedef struct {
  Window *windows; /* one per output coordinate */
  float *weights;  /* windows[i] uses weights[i * stride ...], summing to 1 */
  int stride;      /* the largest count */
} Filter;

static double lanczos3(double x) {
  if (x == 0) return 1;
  if (x <= -3 || x >= 3) return 0;
  const double px = M_PI * x;
  return 3 * sin(px) * sin(px / 3) / (px * px);
}

/*
 * Weights from `src` to `dst` samples with pixel centres aligned (output i sits at (i + 0.5) * src/dst
 * in the source). Downscaling stretches the kernel by the factor, so every source pixel counts; at the
 * edges the window is cut to the image and its weights renormalised.
 */
static Filter plan(int src, int dst) {
  const double factor = (double)src / dst;
  const double stretch = factor > 1 ? factor : 1;
  const double support = 3 * stretch;
  Filter f;
  f.stride = (int)ceil(2 * support) + 2;
  if (f.stride > src) f.stride = src;
  f.windows = lean_alloc(sizeof(Window) * (size_t)dst);
  f.weights = lean_alloc(sizeof(float) * (size_t)dst * (size_t)f.stride);
  for (int i = 0; i < dst; i++) {
    const double centre = (i + 0.5) * factor;
    int first = (int)floor(centre - support);
    int last = (int)ceil(centre + support);
    if (first < 0) first = 0;
    if (last > src) last = src;
    if (last - first > f.stride) last = first + f.stride;
    float *w = f.weights + (size_t)i * f.stride;
    double sum = 0;
    for (int j = first; j < last; j++) sum += lanczos3((j + 0.5 - centre) / stretch);
    for (int j = first; j < last; j++) w[j - first] = (float)(lanczos3((j + 0.5 - centre) / stretch) / sum);
    f.windows[i] = (Window){first, last - first};
  }
  return f;
}

static void free_filter(Filter f) {
  free(f.windows);
  free(f.weights);
}

/* One source row to floats, colour multiplied by alpha when `premultiply` (so transparent pixels lend no colour). */
static void row_to_floats(const uint8_t *row, int width, int premultiply, v128_t *out) {
  int x = 0;
  /* Four pixels a load; the values fit in signed lanes, whose conversion is one instruction. */
  for (; x + 4 <= width; x += 4) {
    const v128_t bytes = wasm_v128_load(row + 4 * x);
    const v128_t low = wasm_u16x8_extend_low_u8x16(bytes);
    const v128_t high = wasm_u16x8_extend_high_u8x16(bytes);
    out[x] = wasm_f32x4_convert_i32x4(wasm_u32x4_extend_low_u16x8(low));
    out[x + 1] = wasm_f32x4_convert_i32x4(wasm_u32x4_extend_high_u16x8(low));
    out[x + 2] = wasm_f32x4_convert_i32x4(wasm_u32x4_extend_low_u16x8(high));
    out[x + 3] = wasm_f32x4_convert_i32x4(wasm_u32x4_extend_high_u16x8(high));
  }
  for (; x < width; x++) {
    uint32_t bits;
    memcpy(&bits, row + 4 * x, 4);
    out[x] = wasm_f32x4_convert_i32x4(wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_u32x4_splat(bits))));
  }
  if (!premultiply) return;
  const v128_t scale = wasm_f32x4_splat(1.0f / 255);
  for (x = 0; x < width; x++) {
    const v128_t px = out[x];
    const v128_t alpha = wasm_f32x4_mul(wasm_i32x4_shuffle(px, px, 3, 3, 3, 3), scale);
    out[x] = wasm_i32x4_shuffle(wasm_f32x4_mul(px, alpha), px, 0, 1, 2, 7);
  }
}

static void filter_row(const v128_t *in, const Filter *f, int width, v128_t *out) {
  for (int x = 0; x < width; x++) {
    const Window w = f->windows[x];
    const float *weight = f->weights + (size_t)x * f->stride;
    const v128_t *px = in + w.first;
    /* Two sums, so consecutive taps do not wait on each other's addition. */
    v128_t even = wasm_f32x4_splat(0);
    v128_t odd = wasm_f32x4_splat(0);
    int k = 0;
    for (; k + 2 <= w.count; k += 2) {
      even = wasm_f32x4_add(even, wasm_f32x4_mul(px[k], wasm_f32x4_splat(weight[k])));
      odd = wasm_f32x4_add(odd, wasm_f32x4_mul(px[k + 1], wasm_f32x4_splat(weight[k + 1])));
    }
    if (k < w.count) even = wasm_f32x4_add(even, wasm_f32x4_mul(px[k], wasm_f32x4_splat(weight[k])));
    out[x] = wasm_f32x4_add(even, odd);
  }
}

/* Rounded and clamped to 0-255, colour divided by alpha again when premultiplied. */
static void floats_to_row(const v128_t *in, int width, int premultiply, uint8_t *row) {
  const v128_t half = wasm_f32x4_splat(0.5f);
  for (int x = 0; x < width; x++) {
    v128_t px = in[x];
    if (premultiply) {
      const float a = wasm_f32x4_extract_lane(px, 3);
      if (a > 0.5f) {
        const v128_t unscale = wasm_f32x4_splat(255 / a);
        px = wasm_i32x4_shuffle(wasm_f32x4_mul(px, unscale), px, 0, 1, 2, 7);
      } else {
        px = wasm_f32x4_splat(0);
      }
    }
    const v128_t ints = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_add(px, half));
    const v128_t shorts = wasm_i16x8_narrow_i32x4(ints, ints);
    const v128_t bytes = wasm_u8x16_narrow_i16x8(shorts, shorts);
    const uint32_t bits = (uint32_t)wasm_i32x4_extract_lane(bytes, 0);
    memcpy(row + 4 * x, &bits, 4);
  }
}

/* The resampler as a row stage: source rows are pulled as the next output row's window needs them. */
typedef struct {
  Rows rows;
  Rows *in;
  Filter across, down;
  int premultiply, ring, ready, y;
  v128_t *source_row, *ring_rows, *sum;
  uint8_t *out;
} Resizer;

static const uint8_t *resize_next(Rows *self) {
  Resizer *r = (Resizer *)self;
  const int out_width = self->width;
  const Window w = r->down.windows[r->y];
  const float *weight = r->down.weights + (size_t)r->y * r->down.stride;
  r->y++;
  /* Ring slot k holds source row k (mod ring) filtered across; windows only move down, so rows are pulled in order. */
  for (; r->ready < w.first + w.count; r->ready++) {
    const uint8_t *row = r->in->next(r->in);
    if (r->ready < w.first) continue;
    row_to_floats(row, r->in->width, r->premultiply, r->source_row);
    filter_row(r->source_row, &r->across, out_width, r->ring_rows + (size_t)(r->ready % r->ring) * out_width);
  }
  v128_t *sum = r->sum;
  /* Two ring rows a pass over the output row, so each pass reads and writes `sum` once for two taps. */
  int k = 0;
  if (w.count % 2) {
    const v128_t *row = r->ring_rows + (size_t)(w.first % r->ring) * out_width;
    const v128_t wk = wasm_f32x4_splat(weight[0]);
    for (int x = 0; x < out_width; x++) sum[x] = wasm_f32x4_mul(row[x], wk);
    k = 1;
  } else {
    memset(sum, 0, sizeof(v128_t) * (size_t)out_width);
  }
  for (; k < w.count; k += 2) {
    const v128_t *a = r->ring_rows + (size_t)((w.first + k) % r->ring) * out_width;
    const v128_t *b = r->ring_rows + (size_t)((w.first + k + 1) % r->ring) * out_width;
    const v128_t wa = wasm_f32x4_splat(weight[k]);
    const v128_t wb = wasm_f32x4_splat(weight[k + 1]);
    for (int x = 0; x < out_width; x++) sum[x] = wasm_f32x4_add(sum[x], wasm_f32x4_add(wasm_f32x4_mul(a[x], wa), wasm_f32x4_mul(b[x], wb)));
  }
  floats_to_row(sum, out_width, r->premultiply, r->out);
  return r->out;
}

static void resize_close(Rows *self) {
  Resizer *r = (Resizer *)self;
  r->in->close(r->in);
  free(r->out);
  free(r->sum);
  free(r->ring_rows);
  free(r->source_row);
  free_filter(r->across);
  free_filter(r->down);
  free(self);
}

/**
 * `in` resampled to `width` x `height` with Lanczos3; `premultiply` weights colour by alpha (for images
 * with transparency). Beyond its input's rows it holds one float source row, the ring (taps x output
 * width floats) and the weights.
 */
Rows *rows_resize(Rows *in, int width, int height, int premultiply) {
  if (width == in->width && height == in->height) return in;
  Resizer *r = (Resizer *)rows_stage(sizeof(Resizer), width, height, resize_next, resize_close);
  r->in = in;
  r->rows.alpha = in->alpha;
  r->rows.grey = in->grey;
  r->premultiply = premultiply;
  r->across = plan(in->width, width);
  r->down = plan(in->height, height);
  r->ring = r->down.stride;
  r->source_row = lean_alloc(sizeof(v128_t) * (size_t)in->width);
  r->ring_rows = lean_alloc(sizeof(v128_t) * (size_t)width * r->ring);
  r->sum = lean_alloc(sizeof(v128_t) * (size_t)width);
  r->out = lean_alloc((size_t)width * 4);
  return &r->rows;
}

/**
 * Resample `width` x `height` RGBA pixels at `rgba` (allocated with lean_alloc, freed here) to
 * `out_width` x `out_height` with Lanczos3; `premultiply` weights colour by alpha (for images with
 * transparency). Returns the output's size; the pixels are at lean_output().
 */
EXPORT(resize_rgba) size_t resize_rgba(uint8_t *rgba, int width, int height, int out_width, int out_height, int premultiply) {
  uint8_t *out = rows_collect(rows_resize(rows_from_buffer(rgba, width, height, premultiply, 0), out_width, out_height, premultiply));
  const size_t out_size = (size_t)out_width * out_height * 4;
  lean_set_output(out, out_size);
  return out_size;
}
