/*
 * trim=border: a sink that reads every row and finds the box of pixels that differ from the border's colour (the top
 * left pixel's) by more than `tolerance` in some channel, alpha included. A pixel counts where the median of its 3x3
 * neighbourhood does (as libvips' find_trim smooths first), that is where at least 5 of the 9 differ: a lossy file's
 * ringing along its border's edge and single noisy pixels are border, a solid edge is not. An image of one colour keeps
 * its whole box. Sixteen bytes at a time: four pixels' differences, sixteen columns' counts.
 */
#include <stdlib.h>
#include <string.h>
#include <wasm_simd128.h>

#include "lean.h"
#include "pipeline.h"

typedef struct {
  int width, left, right, top, bottom;
  /* how many of the three rows around the one judged differ, per column (0-3), from index 1; index 0 and width + 1
     repeat the edge columns, and zeros pad it to whole vectors */
  uint8_t *column;
} Box;

/* Each pixel of `row`: 1 where it differs from `ref` by more than `tolerance` in some channel, else 0. */
static void differing(const uint8_t *row, const uint8_t ref[4], int tolerance, int width, uint8_t *flags) {
  uint32_t packed;
  memcpy(&packed, ref, 4);
  const v128_t r = wasm_i32x4_splat((int32_t)packed), limit = wasm_u8x16_splat((uint8_t)tolerance);
  int x = 0;
  for (; x + 4 <= width; x += 4) {
    const v128_t p = wasm_v128_load(row + 4 * x);
    const v128_t distance = wasm_v128_or(wasm_u8x16_sub_sat(p, r), wasm_u8x16_sub_sat(r, p));
    const v128_t any = wasm_i32x4_ne(wasm_u8x16_gt(distance, limit), wasm_i32x4_splat(0));
    const int bits = wasm_i32x4_bitmask(any);
    flags[x] = bits & 1, flags[x + 1] = (bits >> 1) & 1, flags[x + 2] = (bits >> 2) & 1, flags[x + 3] = (bits >> 3) & 1;
  }
  for (; x < width; x++) {
    int over = 0;
    for (int c = 0; c < 4; c++) over |= (row[4 * x + c] > ref[c] ? row[4 * x + c] - ref[c] : ref[c] - row[4 * x + c]) > tolerance;
    flags[x] = (uint8_t)over;
  }
}

/* The columns (bits of a 16-column chunk at `x`) whose 3x3 neighbourhood has at least 5 differing pixels. */
static unsigned counted(const uint8_t *column, int x, int width) {
  const v128_t sum = wasm_i8x16_add(wasm_i8x16_add(wasm_v128_load(column + x), wasm_v128_load(column + x + 1)), wasm_v128_load(column + x + 2));
  unsigned bits = (unsigned)wasm_i8x16_bitmask(wasm_u8x16_ge(sum, wasm_u8x16_splat(5)));
  return width - x < 16 ? bits & ((1u << (width - x)) - 1) : bits;
}

/* Judges row `y` from whether each pixel of the rows above, at and below it differs (edges repeat their last row). */
static void judge(Box *b, int y, const uint8_t *above, const uint8_t *at, const uint8_t *below) {
  const int width = b->width;
  uint8_t *column = b->column;
  int x = 0;
  for (; x + 16 <= width; x += 16) wasm_v128_store(column + 1 + x, wasm_i8x16_add(wasm_i8x16_add(wasm_v128_load(above + x), wasm_v128_load(at + x)), wasm_v128_load(below + x)));
  for (; x < width; x++) column[1 + x] = (uint8_t)(above[x] + at[x] + below[x]);
  column[0] = column[1];
  column[width + 1] = column[width];
  int first = -1, last = -1;
  for (x = 0; x < width && first < 0; x += 16) {
    const unsigned bits = counted(column, x, width);
    if (bits) first = x + __builtin_ctz(bits);
  }
  if (first < 0) return;
  for (x = (width - 1) / 16 * 16; x >= 0 && last < 0; x -= 16) {
    const unsigned bits = counted(column, x, width);
    if (bits) last = x + 31 - __builtin_clz(bits);
  }
  if (first < b->left) b->left = first;
  if (last > b->right) b->right = last;
  if (y < b->top) b->top = y;
  b->bottom = y;
}

void border_box(Rows *in, int tolerance, int32_t box[4]) {
  const int width = in->width, height = in->height;
  uint8_t ref[4];
  Box b = {width, width, -1, height, -1, lean_alloc((size_t)width + 32)};
  memset(b.column, 0, (size_t)width + 32);
  /* whether each pixel differs, for three rows in turn (padded to whole vectors) */
  const size_t stride = (size_t)width + 16;
  uint8_t *flags = lean_alloc(stride * 3);
  for (int y = 0; y < height; y++) {
    const uint8_t *row = in->next(in);
    if (y == 0) memcpy(ref, row, 4);
    uint8_t *f = flags + (size_t)(y % 3) * stride;
    differing(row, ref, tolerance, width, f);
    /* row y - 1 can be judged once row y is in */
    if (y > 0) judge(&b, y - 1, flags + (size_t)((y > 1 ? y - 2 : 0) % 3) * stride, flags + (size_t)((y - 1) % 3) * stride, f);
  }
  const uint8_t *last = flags + (size_t)((height - 1) % 3) * stride;
  judge(&b, height - 1, flags + (size_t)((height > 1 ? height - 2 : 0) % 3) * stride, last, last);
  in->close(in);
  free(flags);
  free(b.column);
  if (b.right < 0) {
    box[0] = 0, box[1] = 0, box[2] = width, box[3] = height;
    return;
  }
  box[0] = b.left, box[1] = b.top, box[2] = b.right - b.left + 1, box[3] = b.bottom - b.top + 1;
}
