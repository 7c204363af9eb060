/*
 * blur: a Gaussian of standard deviation sigma, row by row, colour weighted by alpha when the rows may be transparent
 * (premultiplied, so that a transparent pixel lends its neighbours no colour). Up to BOX_FROM, the kernel itself over
 * 2 ceil(3 sigma) + 1 rows, in 16-bit fixed point; above it, three box filters in a row along each axis, whose sum
 * approaches the Gaussian closely (the widths from the variance: 3 boxes of widths wl or wl + 2 whose variances add up
 * to sigma^2) at a cost that does not grow with sigma: a running sum per column, each box keeping its own width of rows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <wasm_simd128.h>

#include "lean.h"
#include "pipeline.h"
#include "window.h"

/* Above this sigma, boxes: the kernel's 6 sigma taps a pixel would cost more than the boxes' fixed work. */
#define BOX_FROM 3.0

/* A pixel's four channels as 32-bit lanes. */
static inline v128_t pixel(const uint8_t *p) { return wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(p))); }

void window_open(Window *w, Rows *in, int radius) {
  w->in = in;
  w->radius = radius;
  w->slots = 2 * radius + 2;
  if (w->slots > in->height + 1) w->slots = in->height + 1;
  w->ring = lean_alloc((size_t)w->slots * in->width * 4);
  w->loaded = 0;
}

const uint8_t *window_row(Window *w, int y) {
  const int h = w->in->height;
  if (y < 0) y = 0;
  if (y >= h) y = h - 1;
  const size_t stride = (size_t)w->in->width * 4;
  while (w->loaded <= y) {
    memcpy(w->ring + (size_t)(w->loaded % w->slots) * stride, w->in->next(w->in), stride);
    w->loaded++;
  }
  return w->ring + (size_t)(y % w->slots) * stride;
}

void window_close(Window *w) {
  w->in->close(w->in);
  free(w->ring);
}

float *gaussian_kernel(double sigma, int *radius) {
  *radius = (int)ceil(3 * sigma);
  if (*radius < 1) *radius = 1;
  float *k = lean_alloc(sizeof(float) * (2 * *radius + 1));
  double sum = 0;
  for (int i = -*radius; i <= *radius; i++) sum += k[i + *radius] = (float)exp(-(double)i * i / (2 * sigma * sigma));
  for (int i = 0; i <= 2 * *radius; i++) k[i] = (float)(k[i] / sum);
  return k;
}

void gaussian_row(Window *w, const float *kernel, int radius, int y, float *out, float *scratch) {
  const int width = w->in->width, n = width * 4;
  /* the vertical pass into the middle of `scratch`, whose `radius` pixels either side repeat the edge pixels */
  float *mid = scratch + 4 * radius;
  window_row(w, y + radius); /* the rows below first (they load the ring), then the window from its top */
  memset(mid, 0, sizeof(float) * n);
  for (int i = -radius; i <= radius; i++) {
    const uint8_t *row = window_row(w, y + i);
    const v128_t k = wasm_f32x4_splat(kernel[i + radius]);
    for (int x = 0; x < n; x += 4) {
      const v128_t v = wasm_f32x4_convert_i32x4(pixel(row + x));
      wasm_v128_store(mid + x, wasm_f32x4_add(wasm_v128_load(mid + x), wasm_f32x4_mul(k, v)));
    }
  }
  for (int i = 1; i <= radius; i++) {
    memcpy(mid - 4 * i, mid, 4 * sizeof(float));
    memcpy(mid + n + 4 * (i - 1), mid + n - 4, 4 * sizeof(float));
  }
  /* the horizontal pass, one pixel (R, G, B, A) a SIMD vector */
  for (int x = 0; x < width; x++) {
    const float *p = scratch + 4 * x;
    v128_t sum = wasm_f32x4_splat(0);
    for (int i = 0; i <= 2 * radius; i++) sum = wasm_f32x4_add(sum, wasm_f32x4_mul(wasm_v128_load(p + 4 * i), wasm_f32x4_splat(kernel[i])));
    wasm_v128_store(out + 4 * x, sum);
  }
}

/* ---------------------------------------------------------------- the kernel, for small sigmas */

static void gaussian_close(Rows *self) {
  Gaussian *g = (Gaussian *)self;
  window_close(&g->window);
  free(g->kernel);
  free(g->blur);
  free(g->scratch);
  free(g->row);
  free(self);
}

Rows *gaussian_stage(Rows *in, double sigma, const uint8_t *(*next)(Rows *)) {
  Gaussian *g = (Gaussian *)rows_stage(sizeof(Gaussian), in->width, in->height, next, gaussian_close);
  g->rows.alpha = in->alpha;
  g->rows.grey = in->grey;
  g->kernel = gaussian_kernel(sigma, &g->radius);
  window_open(&g->window, in, g->radius);
  g->blur = lean_alloc(sizeof(float) * in->width * 4);
  g->scratch = lean_alloc(sizeof(float) * (in->width + 2 * g->radius) * 4);
  g->row = lean_alloc((size_t)in->width * 4);
  return &g->rows;
}

int gaussian_next_blur(Gaussian *g) {
  gaussian_row(&g->window, g->kernel, g->radius, g->at, g->blur, g->scratch);
  return g->at++;
}

/*
 * blur's own kernel, in fixed point: eight 16-bit lanes a vector where the floats above have four. Rows are held with 6
 * fractional bits (255 is 16320), colour premultiplied (c a 64 / 255, so an opaque pixel's is 64 c); the weights are
 * Q15, the kernel's two taps at the same distance added first (two values of at most 16320 fit a lane) and multiplied
 * once, rounded (i16x8.q15mulr_sat). Each product is then within 1/128 of a level: the output within 0.1 of the floats'
 * at sigma 3. The pass down the columns makes BATCH output rows at a time, so that each row of the ring is read from
 * memory once for all of them.
 */
#define BATCH 4

typedef struct {
  Rows rows;
  Rows *in;
  int16_t *ring, *mids, *sum, *weights;
  const int16_t **window;
  uint8_t *row;
  int radius, slots, loaded, at, lanes, stride; /* lanes: a row's 4 width, rounded up to 8; stride: a mid row's */
} Fixed;

/* A row of RGBA bytes to 6 fractional bits, premultiplied when `alpha`: c a 64 / 255 as (c a 16448 + 32768) >> 16. */
static void to_fixed(const uint8_t *in, int16_t *out, int n, int alpha) {
  int x = 0;
  const v128_t scale = wasm_i16x8_splat(16448), round = wasm_i32x4_splat(32768);
  for (; x + 16 <= n; x += 16) {
    const v128_t bytes = wasm_v128_load(in + x);
    v128_t half[2] = {wasm_u16x8_extend_low_u8x16(bytes), wasm_u16x8_extend_high_u8x16(bytes)};
    for (int i = 0; i < 2; i++) {
      const v128_t v = half[i], shifted = wasm_i16x8_shl(v, 6);
      if (alpha) {
        const v128_t t = wasm_i16x8_mul(v, wasm_i16x8_shuffle(v, v, 3, 3, 3, 3, 7, 7, 7, 7));
        const v128_t low = wasm_u32x4_shr(wasm_i32x4_add(wasm_u32x4_extmul_low_u16x8(t, scale), round), 16);
        const v128_t high = wasm_u32x4_shr(wasm_i32x4_add(wasm_u32x4_extmul_high_u16x8(t, scale), round), 16);
        const v128_t c = wasm_u16x8_narrow_i32x4(low, high);
        wasm_v128_store(out + x + 8 * i, wasm_i16x8_shuffle(c, shifted, 0, 1, 2, 11, 4, 5, 6, 15));
      } else {
        wasm_v128_store(out + x + 8 * i, shifted);
      }
    }
  }
  for (; x < n; x += 4) {
    const int a = in[x + 3];
    for (int c = 0; c < 3; c++) out[x + c] = (int16_t)(alpha ? ((uint32_t)in[x + c] * a * 16448 + 32768) >> 16 : in[x + c] << 6);
    out[x + 3] = (int16_t)(a << 6);
  }
}

/* Input row y (clamped to the image) in the ring of 2 radius + BATCH, loading the rows up to it. */
static const int16_t *fixed_row(Fixed *f, int y) {
  const int h = f->in->height;
  if (y < 0) y = 0;
  if (y >= h) y = h - 1;
  while (f->loaded <= y) {
    to_fixed(f->in->next(f->in), f->ring + (size_t)(f->loaded % f->slots) * f->lanes, f->in->width * 4, f->rows.alpha);
    f->loaded++;
  }
  return f->ring + (size_t)(y % f->slots) * f->lanes;
}

/*
 * Back to bytes; premultiplied colour divided by alpha again (255 c / A), a pixel whose alpha rounds to 0 all 0. Two
 * pixels whose alpha is within 8 of opaque (1/2000) skip the division: their colour is c / 64, as an opaque image's.
 */
static void from_fixed(const int16_t *in, uint8_t *out, int lanes, int alpha) {
  const v128_t opaque = wasm_i16x8_splat(16312), colour_lanes = wasm_i16x8_make(-1, -1, -1, 0, -1, -1, -1, 0);
  const v128_t unit = wasm_f32x4_make(255, 255, 255, 1), half = wasm_f32x4_splat(0.5f), least = wasm_f32x4_splat(32);
  for (int x = 0; x < lanes; x += 8) {
    const v128_t v = wasm_v128_load(in + x);
    if (!alpha || wasm_i16x8_all_true(wasm_v128_or(wasm_i16x8_ge(v, opaque), colour_lanes))) {
      const v128_t b = wasm_i16x8_shr(wasm_i16x8_add(v, wasm_i16x8_splat(32)), 6);
      wasm_v128_store64_lane(out + x, wasm_u8x16_narrow_i16x8(b, b), 0);
      continue;
    }
    for (int k = 0; k < 2; k++) {
      const v128_t p = wasm_f32x4_convert_i32x4(k ? wasm_i32x4_extend_high_i16x8(v) : wasm_i32x4_extend_low_i16x8(v));
      const v128_t a = wasm_i32x4_shuffle(p, p, 3, 3, 3, 3);
      v128_t c = wasm_f32x4_div(wasm_f32x4_mul(p, unit), wasm_f32x4_max(a, least));
      c = wasm_i32x4_shuffle(c, wasm_f32x4_mul(p, wasm_f32x4_splat(1.0f / 64)), 0, 1, 2, 7);
      c = wasm_v128_and(wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_add(c, half)), wasm_f32x4_ge(a, least));
      c = wasm_i16x8_narrow_i32x4(c, c);
      wasm_v128_store32_lane(out + x + 4 * k, wasm_u8x16_narrow_i16x8(c, c), 0);
    }
  }
}

/*
 * Output rows y0 .. y0 + BATCH - 1 down the columns into `mids`: the centre row, then the pairs at distance i; a strip of
 * STRIP lanes at a time, each tap's rows read along the strip, so that the reads are a few streams at a time and the
 * strip's rows stay in the first-level cache for the whole batch.
 */
#define STRIP 256

static void down_columns(Fixed *f, int y0) {
  const int r = f->radius, lanes = f->lanes;
  const int16_t *w = f->weights;
  fixed_row(f, y0 + BATCH - 1 + r); /* the rows below first (they load the ring), then the window from its top */
  for (int k = 0; k < 2 * r + BATCH; k++) f->window[k] = fixed_row(f, y0 - r + k);
  for (int start = 0; start < lanes; start += STRIP) {
    const int end = start + STRIP < lanes ? start + STRIP : lanes;
    for (int b = 0; b < BATCH; b++) {
      int16_t *acc = f->mids + (size_t)b * f->stride + 4 * r;
      const int16_t *centre = f->window[r + b];
      const v128_t k = wasm_i16x8_splat(w[0]);
      for (int x = start; x < end; x += 8) wasm_v128_store(acc + x, wasm_i16x8_q15mulr_sat(wasm_v128_load(centre + x), k));
    }
    for (int i = 1; i <= r; i++) {
      const v128_t k = wasm_i16x8_splat(w[i]);
      for (int b = 0; b < BATCH; b++) {
        int16_t *acc = f->mids + (size_t)b * f->stride + 4 * r;
        const int16_t *above = f->window[r + b - i], *below = f->window[r + b + i];
        for (int x = start; x < end; x += 8) {
          const v128_t pair = wasm_i16x8_add(wasm_v128_load(above + x), wasm_v128_load(below + x));
          wasm_v128_store(acc + x, wasm_i16x8_add(wasm_v128_load(acc + x), wasm_i16x8_q15mulr_sat(pair, k)));
        }
      }
    }
  }
}

static const uint8_t *fixed_next(Rows *self) {
  Fixed *f = (Fixed *)self;
  const int y = f->at++, r = f->radius, lanes = f->lanes, n = self->width * 4;
  const int16_t *w = f->weights;
  if (y % BATCH == 0) down_columns(f, y);
  int16_t *mid = f->mids + (size_t)(y % BATCH) * f->stride + 4 * r;
  /* the edge pixels repeated `r` either side, then across the row: pixel x's neighbours are 4 lanes apart */
  for (int i = 1; i <= r; i++) {
    memcpy(mid - 4 * i, mid, 4 * sizeof(int16_t));
    memcpy(mid + n + 4 * (i - 1), mid + n - 4, 4 * sizeof(int16_t));
  }
  for (int x = 0; x < lanes; x += 8) {
    const int16_t *p = mid + x;
    v128_t acc = wasm_i16x8_q15mulr_sat(wasm_v128_load(p), wasm_i16x8_splat(w[0]));
    for (int i = 1; i <= r; i++) {
      const v128_t pair = wasm_i16x8_add(wasm_v128_load(p - 4 * i), wasm_v128_load(p + 4 * i));
      acc = wasm_i16x8_add(acc, wasm_i16x8_q15mulr_sat(pair, wasm_i16x8_splat(w[i])));
    }
    wasm_v128_store(f->sum + x, acc);
  }
  from_fixed(f->sum, f->row, lanes, self->alpha);
  return f->row;
}

static void fixed_close(Rows *self) {
  Fixed *f = (Fixed *)self;
  f->in->close(f->in);
  free(f->ring);
  free(f->mids);
  free(f->sum);
  free(f->weights);
  free(f->window);
  free(f->row);
  free(self);
}

static Rows *fixed_stage(Rows *in, double sigma) {
  Fixed *f = (Fixed *)rows_stage(sizeof(Fixed), in->width, in->height, fixed_next, fixed_close);
  f->rows.alpha = in->alpha;
  f->rows.grey = in->grey;
  f->in = in;
  float *kernel = gaussian_kernel(sigma, &f->radius);
  const int r = f->radius;
  /* Q15 weights from the centre out, summing to 1 exactly (the centre takes the rounding), so flat areas stay flat */
  f->weights = lean_alloc(sizeof(int16_t) * (r + 1));
  int total = 0;
  for (int i = 1; i <= r; i++) total += 2 * (f->weights[i] = (int16_t)lroundf(kernel[r + i] * 32768));
  f->weights[0] = (int16_t)(32768 - total > 32767 ? 32767 : 32768 - total);
  free(kernel);
  f->lanes = (in->width * 4 + 7) & ~7;
  f->slots = 2 * r + BATCH;
  if (f->slots > in->height + 1) f->slots = in->height + 1;
  f->ring = lean_alloc(sizeof(int16_t) * f->slots * f->lanes);
  f->window = lean_alloc(sizeof(int16_t *) * (2 * r + BATCH));
  /* each output row of the batch down the columns, with `r` pixels either side (and a vector's slack), then across */
  f->stride = f->lanes + 8 * r + 8;
  f->mids = lean_alloc(sizeof(int16_t) * BATCH * f->stride);
  f->sum = lean_alloc(sizeof(int16_t) * f->lanes);
  f->row = lean_alloc((size_t)f->lanes);
  return &f->rows;
}

/* ---------------------------------------------------------------- three boxes, for large ones */

/* The boxes' half-widths: n boxes whose variances ((w^2 - 1) / 12 each) add up to sigma^2. */
static void box_radii(double sigma, int radii[3]) {
  const int n = 3;
  int wl = (int)floor(sqrt(12 * sigma * sigma / n + 1));
  if (wl % 2 == 0) wl--;
  const int wu = wl + 2;
  const int m = (int)lround((12 * sigma * sigma - n * wl * wl - 4 * n * wl - 3 * n) / (-4.0 * wl - 4));
  for (int i = 0; i < n; i++) radii[i] = ((i < m ? wl : wu) - 1) / 2;
}

/* One box along a row, edges extended: out[x] = mean of in[x - r .. x + r], the four channels of a pixel at once. */
static void box_row(const uint8_t *in, uint8_t *out, int width, int r) {
  const v128_t inverse = wasm_f32x4_splat(1.0f / (2 * r + 1)), half = wasm_f32x4_splat(0.5f);
  v128_t sum = wasm_i32x4_splat(0);
  for (int i = -r; i <= r; i++) sum = wasm_i32x4_add(sum, pixel(in + 4 * (i < 0 ? 0 : i >= width ? width - 1 : i)));
  for (int x = 0; x < width; x++) {
    v128_t v = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_i32x4(sum), inverse), half));
    v = wasm_i16x8_narrow_i32x4(v, v);
    wasm_v128_store32_lane(out + 4 * x, wasm_u8x16_narrow_i16x8(v, v), 0);
    const int add = x + r + 1, drop = x - r;
    sum = wasm_i32x4_sub(wasm_i32x4_add(sum, pixel(in + 4 * (add >= width ? width - 1 : add))), pixel(in + 4 * (drop < 0 ? 0 : drop)));
  }
}

typedef struct {
  Rows rows;
  Rows *in;
  uint8_t *row, *scratch;
  int radii[3];
} BoxH;

static const uint8_t *box_h_next(Rows *self) {
  BoxH *b = (BoxH *)self;
  const uint8_t *in = b->in->next(b->in);
  box_row(in, b->row, self->width, b->radii[0]);
  box_row(b->row, b->scratch, self->width, b->radii[1]);
  box_row(b->scratch, b->row, self->width, b->radii[2]);
  return b->row;
}

static void box_h_close(Rows *self) {
  BoxH *b = (BoxH *)self;
  b->in->close(b->in);
  free(b->row);
  free(b->scratch);
  free(self);
}

/*
 * One box down the columns: a running sum per column, over a window of 2 r + 2 rows, in 16-bit lanes (a box of r up to
 * 128, as blur=250's, sums to at most 257 x 255: it fits), the mean as (sum m + 32768) >> 16 with m = 65536 / (2 r + 1).
 */
typedef struct {
  Rows rows;
  Window window;
  uint16_t *sum;
  uint8_t *row;
  int radius, at;
} BoxV;

static const uint8_t *box_v_next(Rows *self) {
  BoxV *b = (BoxV *)self;
  const int y = b->at++, r = b->radius, n = self->width * 4;
  const uint32_t m = (uint32_t)lround(65536.0 / (2 * r + 1));
  uint16_t *sum = b->sum;
  const uint8_t *add, *drop;
  if (y == 0) {
    memset(sum, 0, sizeof(uint16_t) * n);
    for (int i = -r; i < r; i++) {
      const uint8_t *row = window_row(&b->window, i);
      for (int x = 0; x < n; x++) sum[x] += row[x];
    }
    add = window_row(&b->window, r);
    drop = NULL;
  } else {
    add = window_row(&b->window, y + r);
    drop = window_row(&b->window, y - r - 1);
  }
  const v128_t mv = wasm_i16x8_splat((int16_t)m), round = wasm_i32x4_splat(32768);
  int x = 0;
  for (; x + 16 <= n; x += 16) {
    const v128_t a = wasm_v128_load(add + x), d = drop ? wasm_v128_load(drop + x) : wasm_i8x16_splat(0);
    v128_t low = wasm_v128_load(sum + x), high = wasm_v128_load(sum + x + 8);
    low = wasm_i16x8_sub(wasm_i16x8_add(low, wasm_u16x8_extend_low_u8x16(a)), wasm_u16x8_extend_low_u8x16(d));
    high = wasm_i16x8_sub(wasm_i16x8_add(high, wasm_u16x8_extend_high_u8x16(a)), wasm_u16x8_extend_high_u8x16(d));
    wasm_v128_store(sum + x, low);
    wasm_v128_store(sum + x + 8, high);
    v128_t q[4] = {wasm_u32x4_extmul_low_u16x8(low, mv), wasm_u32x4_extmul_high_u16x8(low, mv), wasm_u32x4_extmul_low_u16x8(high, mv), wasm_u32x4_extmul_high_u16x8(high, mv)};
    for (int k = 0; k < 4; k++) q[k] = wasm_u32x4_shr(wasm_i32x4_add(q[k], round), 16);
    wasm_v128_store(b->row + x, wasm_u8x16_narrow_i16x8(wasm_u16x8_narrow_i32x4(q[0], q[1]), wasm_u16x8_narrow_i32x4(q[2], q[3])));
  }
  for (; x < n; x++) {
    sum[x] = (uint16_t)(sum[x] + add[x] - (drop ? drop[x] : 0));
    b->row[x] = (uint8_t)((sum[x] * m + 32768) >> 16);
  }
  return b->row;
}

static void box_v_close(Rows *self) {
  BoxV *b = (BoxV *)self;
  window_close(&b->window);
  free(b->sum);
  free(b->row);
  free(self);
}

static Rows *box_v(Rows *in, int radius) {
  BoxV *b = (BoxV *)rows_stage(sizeof(BoxV), in->width, in->height, box_v_next, box_v_close);
  b->rows.alpha = in->alpha;
  b->rows.grey = in->grey;
  b->radius = radius;
  window_open(&b->window, in, radius);
  b->sum = lean_alloc(sizeof(uint16_t) * in->width * 4);
  b->row = lean_alloc((size_t)in->width * 4);
  return &b->rows;
}

/*
 * The boxes' colour weighted by alpha: premultiplied before them, c a / 255 rounded, and divided again after them (the
 * floats' 255 c / a, rounded; a pixel left fully transparent is all 0). Bytes in between, as the boxes' own steps are.
 */
typedef struct {
  Rows rows;
  Rows *in;
  uint8_t *row;
} Alpha;

/* Every pixel of the row opaque: nothing to weight. */
static int opaque_row(const uint8_t *row, int width) {
  v128_t all = wasm_i8x16_splat(-1);
  int x = 0;
  for (; x + 4 <= width; x += 4) all = wasm_v128_and(all, wasm_v128_load(row + 4 * x));
  if (!wasm_i32x4_all_true(wasm_i32x4_eq(wasm_v128_or(all, wasm_i32x4_splat(0x00ffffff)), wasm_i8x16_splat(-1)))) return 0;
  for (; x < width; x++) if (row[4 * x + 3] != 255) return 0;
  return 1;
}

static const uint8_t *premultiply_next(Rows *self) {
  Alpha *p = (Alpha *)self;
  const uint8_t *in = p->in->next(p->in);
  const int n = self->width * 4;
  if (opaque_row(in, self->width)) return in;
  int x = 0;
  for (; x + 8 <= n; x += 8) {
    const v128_t v = wasm_u16x8_load8x8(in + x);
    const v128_t a = wasm_i16x8_shuffle(v, v, 3, 3, 3, 3, 7, 7, 7, 7);
    v128_t t = wasm_i16x8_add(wasm_i16x8_mul(v, a), wasm_i16x8_splat(128));
    t = wasm_u16x8_shr(wasm_i16x8_add(t, wasm_u16x8_shr(t, 8)), 8); /* (t + t / 256) / 256: t / 255, rounded */
    t = wasm_i16x8_shuffle(t, v, 0, 1, 2, 11, 4, 5, 6, 15);
    wasm_v128_store64_lane(p->row + x, wasm_u8x16_narrow_i16x8(t, t), 0);
  }
  for (; x < n; x += 4) {
    for (int c = 0; c < 3; c++) p->row[x + c] = (uint8_t)((in[x + c] * in[x + 3] + 127) / 255);
    p->row[x + 3] = in[x + 3];
  }
  return p->row;
}

static const uint8_t *unpremultiply_next(Rows *self) {
  Alpha *p = (Alpha *)self;
  const uint8_t *in = p->in->next(p->in);
  if (opaque_row(in, self->width)) return in;
  const v128_t unit = wasm_f32x4_make(255, 255, 255, 0), half = wasm_f32x4_splat(0.5f), one = wasm_f32x4_splat(1);
  for (int x = 0; x < self->width; x++) {
    const v128_t v = wasm_f32x4_convert_i32x4(pixel(in + 4 * x));
    const v128_t a = wasm_i32x4_shuffle(v, v, 3, 3, 3, 3);
    v128_t c = wasm_f32x4_div(wasm_f32x4_mul(v, unit), wasm_f32x4_max(a, one));
    c = wasm_i32x4_shuffle(c, v, 0, 1, 2, 7);
    c = wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_add(c, half));
    c = wasm_i16x8_narrow_i32x4(c, c);
    wasm_v128_store32_lane(p->row + 4 * x, wasm_u8x16_narrow_i16x8(c, c), 0);
  }
  return p->row;
}

static void alpha_close(Rows *self) {
  Alpha *p = (Alpha *)self;
  p->in->close(p->in);
  free(p->row);
  free(self);
}

static Rows *alpha_stage(Rows *in, const uint8_t *(*next)(Rows *)) {
  Alpha *p = (Alpha *)rows_stage(sizeof(Alpha), in->width, in->height, next, alpha_close);
  p->rows.alpha = in->alpha;
  p->rows.grey = in->grey;
  p->in = in;
  p->row = lean_alloc((size_t)in->width * 4 + 8);
  return &p->rows;
}

Rows *rows_blur(Rows *in, double sigma) {
  if (sigma <= 0) return in;
  if (sigma <= BOX_FROM) return fixed_stage(in, sigma);
  const int alpha = in->alpha;
  if (alpha) in = alpha_stage(in, premultiply_next);
  BoxH *h = (BoxH *)rows_stage(sizeof(BoxH), in->width, in->height, box_h_next, box_h_close);
  h->rows.alpha = in->alpha;
  h->rows.grey = in->grey;
  h->in = in;
  box_radii(sigma, h->radii);
  h->row = lean_alloc((size_t)in->width * 4);
  h->scratch = lean_alloc((size_t)in->width * 4);
  Rows *out = &h->rows;
  for (int i = 0; i < 3; i++) out = box_v(out, h->radii[i]);
  return alpha ? alpha_stage(out, unpremultiply_next) : out;
}
