/*
 * Lanczos3 resampling of RGBA pixels for the lean codec, separable and row by row.
 *
 * Why not jSquash's resize (docs/notes/benchmarks.md, "What we tried"): it takes the whole image into its
 * own memory, keeps float copies of it, and ran 4.5-9.6x slower than libvips. Here each source row is
 * turned into floats once, filtered horizontally into a ring of output-width rows, and every output
 * row is a weighted sum of the ring rows it needs. Beyond the source and the output, memory is one
 * float source row, the ring (taps x output width) and the weights. One pixel is one f32x4 (R, G, B, A),
 * so each filter tap is one SIMD multiply-add.
 *
 * An opaque image made smaller (a photo's thumbnail, the common case) takes a fixed-point path instead: 16-bit
 * lanes hold two pixels a vector, so each tap costs half the float path's work and the ring half its memory.
 * Across, two taps at once: two neighbouring pixels' channels side by side against their two weights (14
 * fractional bits) in one dot product; the result keeps 6 fractional bits in 16 bits (a lobe's overshoot
 * of 1.2 x 255 still fits). Down, each tap is one rounding Q15 multiply a ring row. Against the float path
 * a value differs by at most 1.
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

/* Fixed-point weights: across, pairs of taps as i16x8 (w0, w1) x 4 in Q14, windows widened to an even count;
 * down, one Q15 weight a tap. */
typedef struct {
  Window *windows;
  v128_t *pairs; /* pairs[i * half ...] */
  int half;      /* pairs a window */
  int16_t *q15;  /* q15[i * stride ...] */
} Fixed;

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

/*
 * `weights` (summing to 1) as integers of `one` summing to exactly `one`: the rounding's remainder goes to the largest.
 * Returns the remainder, which stays a few units for a window of tens of taps; a shrink by a hundred has thousands of
 * weights of a unit or two, whose rounding errors add up to a weight of its own.
 */
static int32_t to_fixed(const float *weights, int count, int one, int32_t *out) {
  int32_t sum = 0;
  int largest = 0;
  for (int k = 0; k < count; k++) {
    out[k] = (int32_t)lrintf(weights[k] * (float)one);
    sum += out[k];
    if (fabsf(weights[k]) > fabsf(weights[largest])) largest = k;
  }
  out[largest] += one - sum;
  return one - sum;
}

/*
 * The fixed-point form of `across` (for `src` source pixels) and `down`, or 0 where it cannot hold them: a Q15
 * weight must stay under 1 (only enlarging comes near), an even window must fit in the row, and no window's rounding
 * may move its largest weight by more than 1/512 of the whole (a shrink by thousands keeps the floats).
 */
static int plan_fixed(const Filter *across, int src, const Filter *down, int dst_width, int dst_height, Fixed *f) {
  f->half = (across->stride + 1) / 2;
  if (2 * f->half > src) return 0;
  /* on the heap: a window of a large shrink has tens of thousands of taps, more than the stack holds */
  int32_t *ints = lean_alloc(sizeof(int32_t) * (size_t)(down->stride > 2 * f->half ? down->stride : 2 * f->half));
  int16_t *taps = lean_alloc(sizeof(int16_t) * 2 * (size_t)f->half);
  int fits = 1;
  for (int i = 0; fits && i < dst_height; i++) {
    const int32_t remainder = to_fixed(down->weights + (size_t)i * down->stride, down->windows[i].count, 32768, ints);
    fits = remainder <= 64 && remainder >= -64;
    for (int k = 0; k < down->windows[i].count; k++) fits = fits && ints[k] < 32768 && ints[k] >= -32768;
  }
  for (int i = 0; fits && i < dst_width; i++) {
    const int32_t remainder = to_fixed(across->weights + (size_t)i * across->stride, across->windows[i].count, 16384, ints);
    fits = remainder <= 32 && remainder >= -32;
  }
  if (!fits) {
    free(taps);
    free(ints);
    return 0;
  }
  f->windows = lean_alloc(sizeof(Window) * (size_t)dst_width);
  f->pairs = lean_alloc(sizeof(v128_t) * (size_t)dst_width * f->half);
  f->q15 = lean_alloc(sizeof(int16_t) * (size_t)dst_height * down->stride);
  for (int i = 0; i < dst_height; i++) {
    to_fixed(down->weights + (size_t)i * down->stride, down->windows[i].count, 32768, ints);
    for (int k = 0; k < down->windows[i].count; k++) f->q15[(size_t)i * down->stride + k] = (int16_t)ints[k];
  }
  for (int i = 0; i < dst_width; i++) {
    const Window w = across->windows[i];
    /* An even count of taps, so pairs never read past the row: moved left where the row ends, weighted 0. */
    const int count = (w.count + 1) & ~1;
    const int first = w.first + count > src ? src - count : w.first;
    memset(taps, 0, sizeof(int16_t) * 2 * (size_t)f->half);
    to_fixed(across->weights + (size_t)i * across->stride, w.count, 16384, ints);
    for (int k = 0; k < w.count; k++) taps[w.first - first + k] = (int16_t)ints[k];
    for (int p = 0; p < f->half; p++)
      f->pairs[(size_t)i * f->half + p] = wasm_i16x8_make(taps[2 * p], taps[2 * p + 1], taps[2 * p], taps[2 * p + 1], taps[2 * p],
                                                          taps[2 * p + 1], taps[2 * p], taps[2 * p + 1]);
    f->windows[i] = (Window){first, count};
  }
  free(taps);
  free(ints);
  return 1;
}

/* One RGBA row filtered across into 16-bit values with 6 fractional bits, two output pixels a store. */
static void filter_row_fixed(const uint8_t *in, const Fixed *f, int width, int16_t *out) {
  const v128_t zero = wasm_i32x4_splat(0);
  const v128_t round = wasm_i32x4_splat(1 << 7);
  v128_t previous = zero;
  for (int x = 0; x < width; x++) {
    const Window w = f->windows[x];
    const v128_t *pair = f->pairs + (size_t)x * f->half;
    const uint8_t *px = in + 4 * w.first;
    v128_t sum = round;
    for (int p = 0; 2 * p < w.count; p++) {
      /* R0 R1 G0 G1 B0 B1 A0 A1 as 16-bit lanes: the two pixels' channels side by side */
      const v128_t two = wasm_v128_load64_zero(px + 8 * p);
      const v128_t sides = wasm_u16x8_extend_low_u8x16(wasm_i8x16_shuffle(two, two, 0, 4, 1, 5, 2, 6, 3, 7, 0, 4, 1, 5, 2, 6, 3, 7));
      sum = wasm_i32x4_add(sum, wasm_i32x4_dot_i16x8(sides, pair[p]));
    }
    sum = wasm_i32x4_shr(sum, 8);
    if (x & 1) wasm_v128_store(out + 4 * (x - 1), wasm_i16x8_narrow_i32x4(previous, sum));
    previous = sum;
  }
  if (width & 1) wasm_v128_store64_lane(out + 4 * (width - 1), wasm_i16x8_narrow_i32x4(previous, previous), 0);
}

/* The next output row of the fixed-point path: the ring rows' weighted sum, rounded to bytes. */
static void sum_rows_fixed(int16_t *const *rows, const int16_t *q15, int count, int values, uint8_t *out) {
  const v128_t round = wasm_i16x8_splat(1 << 5);
  int i = 0;
  for (; i + 16 <= values; i += 16) {
    v128_t low = round, high = round;
    for (int k = 0; k < count; k++) {
      const v128_t weight = wasm_i16x8_splat(q15[k]);
      low = wasm_i16x8_add_sat(low, wasm_i16x8_q15mulr_sat(wasm_v128_load(rows[k] + i), weight));
      high = wasm_i16x8_add_sat(high, wasm_i16x8_q15mulr_sat(wasm_v128_load(rows[k] + i + 8), weight));
    }
    wasm_v128_store(out + i, wasm_u8x16_narrow_i16x8(wasm_i16x8_shr(low, 6), wasm_i16x8_shr(high, 6)));
  }
  for (; i < values; i += 4) {
    v128_t low = round;
    for (int k = 0; k < count; k++)
      low = wasm_i16x8_add_sat(low, wasm_i16x8_q15mulr_sat(wasm_v128_load64_zero(rows[k] + i), wasm_i16x8_splat(q15[k])));
    wasm_v128_store32_lane(out + i, wasm_u8x16_narrow_i16x8(wasm_i16x8_shr(low, 6), low), 0);
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
  int fixed;
  Fixed f;
  int16_t *fixed_ring;   /* ring rows of the fixed-point path, 4 values a pixel */
  int16_t **fixed_rows;  /* the ring rows an output row sums, in order */
} Resizer;

static const uint8_t *resize_next(Rows *self) {
  Resizer *r = (Resizer *)self;
  const int out_width = self->width;
  const Window w = r->down.windows[r->y];
  const float *weight = r->down.weights + (size_t)r->y * r->down.stride;
  r->y++;
  if (r->fixed) {
    const size_t values = (size_t)out_width * 4;
    for (; r->ready < w.first + w.count; r->ready++) {
      const uint8_t *row = r->in->next(r->in);
      if (r->ready >= w.first) filter_row_fixed(row, &r->f, out_width, r->fixed_ring + (size_t)(r->ready % r->ring) * values);
    }
    for (int k = 0; k < w.count; k++) r->fixed_rows[k] = r->fixed_ring + (size_t)((w.first + k) % r->ring) * values;
    sum_rows_fixed(r->fixed_rows, r->f.q15 + (size_t)(r->y - 1) * r->down.stride, w.count, (int)values, r->out);
    return r->out;
  }
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
  if (r->fixed) {
    free(r->fixed_ring);
    free(r->fixed_rows);
    free(r->f.windows);
    free(r->f.pairs);
    free(r->f.q15);
  }
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
  r->out = lean_alloc((size_t)width * 4);
  r->fixed = !premultiply && width <= in->width && height <= in->height && plan_fixed(&r->across, in->width, &r->down, width, height, &r->f);
  if (r->fixed) {
    r->fixed_ring = lean_alloc(sizeof(int16_t) * 4 * (size_t)width * r->ring);
    r->fixed_rows = lean_alloc(sizeof(int16_t *) * (size_t)r->ring);
    return &r->rows;
  }
  r->source_row = lean_alloc(sizeof(v128_t) * (size_t)in->width);
  r->ring_rows = lean_alloc(sizeof(v128_t) * (size_t)width * r->ring);
  r->sum = lean_alloc(sizeof(v128_t) * (size_t)width);
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
