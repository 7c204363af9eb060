/*
 * blur: a Gaussian of standard deviation sigma, row by row. Up to BOX_FROM (3), the kernel itself over a window of
 * 2 ceil(3 sigma) + 1 rows (window.h); above it, three box filters in a row along each axis, whose sum approaches the
 * Gaussian closely (the widths from the variance: 3 boxes of widths wl or wl + 2 whose variances add up to sigma^2)
 * at a cost that does not grow with sigma: a running sum per column, each box keeping its own width of rows.
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

static inline uint8_t clamp8(float v) { return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)(v + 0.5f); }

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

static const uint8_t *blur_next(Rows *self) {
  Gaussian *g = (Gaussian *)self;
  gaussian_next_blur(g);
  for (int x = 0; x < self->width * 4; x++) g->row[x] = clamp8(g->blur[x]);
  return g->row;
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

/* One box down the columns: a running sum per column, over a window of 2 r + 2 rows. */
typedef struct {
  Rows rows;
  Window window;
  int32_t *sum;
  uint8_t *row;
  int radius, at;
} BoxV;

static const uint8_t *box_v_next(Rows *self) {
  BoxV *b = (BoxV *)self;
  const int y = b->at++, r = b->radius, n = self->width * 4;
  const float inverse = 1.0f / (2 * r + 1);
  if (y == 0) {
    memset(b->sum, 0, sizeof(int32_t) * n);
    for (int i = -r; i <= r; i++) {
      const uint8_t *row = window_row(&b->window, i);
      for (int x = 0; x < n; x++) b->sum[x] += row[x];
    }
  } else {
    const uint8_t *add = window_row(&b->window, y + r);
    const uint8_t *drop = window_row(&b->window, y - r - 1);
    for (int x = 0; x < n; x++) b->sum[x] += add[x] - drop[x];
  }
  for (int x = 0; x < n; x++) b->row[x] = (uint8_t)(b->sum[x] * inverse + 0.5f);
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
  b->sum = lean_alloc(sizeof(int32_t) * in->width * 4);
  b->row = lean_alloc((size_t)in->width * 4);
  return &b->rows;
}

Rows *rows_blur(Rows *in, double sigma) {
  if (sigma <= 0) return in;
  if (sigma <= BOX_FROM) return gaussian_stage(in, sigma, blur_next);
  BoxH *h = (BoxH *)rows_stage(sizeof(BoxH), in->width, in->height, box_h_next, box_h_close);
  h->rows.alpha = in->alpha;
  h->rows.grey = in->grey;
  h->in = in;
  box_radii(sigma, h->radii);
  h->row = lean_alloc((size_t)in->width * 4);
  h->scratch = lean_alloc((size_t)in->width * 4);
  Rows *out = &h->rows;
  for (int i = 0; i < 3; i++) out = box_v(out, h->radii[i]);
  return out;
}
