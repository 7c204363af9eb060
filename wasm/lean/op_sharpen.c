/*
 * sharpen: an unsharp mask, row by row. Each colour moves away from its Gaussian blur by `amount` times the
 * difference (out = in + amount (in - blur)), so edges gain contrast and flat areas stay as they were; alpha is kept.
 * The blur's window is a few rows (window.h): sigma 1 spans 7.
 */
#include "lean.h"
#include "pipeline.h"
#include "window.h"

static const uint8_t *sharpen_next(Rows *self) {
  Gaussian *s = (Gaussian *)self;
  const uint8_t *in = window_row(&s->window, gaussian_next_blur(s));
  for (int x = 0; x < self->width; x++) {
    for (int c = 0; c < 3; c++) {
      const float v = in[4 * x + c] + s->amount * (in[4 * x + c] - s->blur[4 * x + c]);
      s->row[4 * x + c] = v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)(v + 0.5f);
    }
    s->row[4 * x + 3] = in[4 * x + 3];
  }
  return s->row;
}

Rows *rows_sharpen(Rows *in, double sigma, double amount) {
  if (amount <= 0 || sigma <= 0) return in;
  Rows *rows = gaussian_stage(in, sigma, sharpen_next);
  ((Gaussian *)rows)->amount = (float)amount;
  return rows;
}
