/*
 * A box shrink by a whole factor: each output pixel the mean of a `factor` x `factor` block of input pixels (fewer at
 * the right and bottom edges). gravity=auto's preview from the rows its pass keeps for the conversion
 * (src/pipeline/rows.ts): the block means first, at a fraction of the cost of Lanczos3 over the large image, which then
 * resamples only the small one.
 */
#include <stdlib.h>
#include <string.h>
#include <wasm_simd128.h>

#include "lean.h"
#include "pipeline.h"

/* A block's total of 16 x 16 pixels of 255 still fits 16 bits, so the sums stay in u16 lanes. */
#define MOST 16

typedef struct {
  Rows rows;
  Rows *in;
  int factor, at; /* `at`: input rows read */
  uint16_t *columns; /* a block's rows added up, a lane per input byte (and one pixel more of zeros) */
  uint8_t *row;
} Shrink;

static const uint8_t *shrink_next(Rows *self) {
  Shrink *s = (Shrink *)self;
  Rows *in = s->in;
  const int factor = s->factor, in_width = in->width, bytes = in_width * 4;
  const int rows = in->height - s->at < factor ? in->height - s->at : factor;
  uint16_t *columns = s->columns;
  memset(columns, 0, (size_t)(bytes + 4) * sizeof(uint16_t));
  for (int j = 0; j < rows; j++) {
    const uint8_t *p = in->next(in);
    int i = 0;
    for (; i + 16 <= bytes; i += 16) {
      const v128_t v = wasm_v128_load(p + i);
      wasm_v128_store(columns + i, wasm_i16x8_add(wasm_v128_load(columns + i), wasm_u16x8_extend_low_u8x16(v)));
      wasm_v128_store(columns + i + 8, wasm_i16x8_add(wasm_v128_load(columns + i + 8), wasm_u16x8_extend_high_u8x16(v)));
    }
    for (; i < bytes; i++) columns[i] += p[i];
  }
  s->at += rows;
  /* two pixels a vector: only the last block can be odd, and the pixel of zeros past the row is its second half */
  const v128_t full = wasm_f32x4_splat(1.0f / (float)(factor * rows));
  for (int x = 0; x < self->width; x++) {
    const int first = x * factor, last = first + factor < in_width ? first + factor : in_width;
    v128_t sum = wasm_i16x8_splat(0);
    for (int i = first; i < last; i += 2) sum = wasm_i16x8_add(sum, wasm_v128_load(columns + 4 * i));
    sum = wasm_i16x8_add(sum, wasm_i16x8_shuffle(sum, sum, 4, 5, 6, 7, 0, 1, 2, 3));
    const v128_t scale = last - first == factor ? full : wasm_f32x4_splat(1.0f / (float)((last - first) * rows));
    const v128_t mean = wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_convert_u32x4(wasm_u32x4_extend_low_u16x8(sum)), scale), wasm_f32x4_splat(0.5f));
    const v128_t bytes4 = wasm_i32x4_trunc_sat_f32x4(mean);
    const v128_t narrow = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(bytes4, bytes4), wasm_i16x8_splat(0));
    wasm_v128_store32_lane(s->row + 4 * x, narrow, 0);
  }
  return s->row;
}

static void shrink_close(Rows *self) {
  Shrink *s = (Shrink *)self;
  s->in->close(s->in);
  free(s->columns);
  free(s->row);
  free(self);
}

Rows *rows_shrink(Rows *in, int factor) {
  if (factor <= 1) return in;
  /* (a power of two: every block but the last is an even number of pixels wide) */
  if (factor > MOST || (factor & (factor - 1))) fail("shrink factor not a power of two up to 16");
  Shrink *s = (Shrink *)rows_stage(sizeof(Shrink), (in->width + factor - 1) / factor, (in->height + factor - 1) / factor, shrink_next, shrink_close);
  s->in = in;
  s->factor = factor;
  s->rows.alpha = in->alpha;
  s->rows.grey = in->grey;
  s->columns = lean_alloc(((size_t)in->width + 1) * 4 * sizeof(uint16_t));
  s->row = lean_alloc((size_t)s->rows.width * 4);
  return &s->rows;
}
