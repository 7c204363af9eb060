/*
 * A window of rows for the stages whose output row y needs the input's rows y - radius .. y + radius (blur, sharpen):
 * a ring of 2 radius + 2 input rows as they came (RGBA, 4 bytes a pixel), rows past an edge read as the edge's row.
 */
#ifndef WINDOW_H
#define WINDOW_H

#include <stdint.h>

#include "pipeline.h"

typedef struct {
  Rows *in;
  uint8_t *ring;
  int radius, slots, loaded;
} Window;

void window_open(Window *w, Rows *in, int radius);
/* Input row y (clamped to the image), valid while y stays within the window of the output row asked for last. */
const uint8_t *window_row(Window *w, int y);
void window_close(Window *w);

/* Gaussian weights for sigma, from -radius to radius (radius = ceil(3 sigma)), summing to 1. */
float *gaussian_kernel(double sigma, int *radius);
/* Output row y of the window's rows blurred by `kernel` (vertically, then horizontally), as RGBA floats; `scratch` one row
 * and `radius` pixels either side. */
void gaussian_row(Window *w, const float *kernel, int radius, int y, float *out, float *scratch);

/* A stage that blurs its window's rows by a Gaussian (`blur`: row `at`, as floats) and makes its output row from them: the
 * blur itself (op_blur.c) or the input moved away from it (op_sharpen.c). `amount` is the latter's. */
typedef struct {
  Rows rows;
  Window window;
  float *kernel, *blur, *scratch;
  uint8_t *row;
  float amount;
  int radius, at;
} Gaussian;

Rows *gaussian_stage(Rows *in, double sigma, const uint8_t *(*next)(Rows *));
/* The next row's blur into g->blur; returns the row's index. */
int gaussian_next_blur(Gaussian *g);

#endif
