/*
 * brightness, contrast, gamma and saturation, with Cloudflare's meaning (1 leaves the image as it is): brightness
 * multiplies each colour, contrast stretches it away from mid-grey, gamma raises it to 1 / gamma (2 lightens), in that
 * order, as one table of 256 entries; saturation then moves each pixel away from its grey (BT.601 luma) by its factor
 * (0 grey). Alpha is kept.
 */
#include <math.h>
#include <stdlib.h>

#include "lean.h"
#include "pipeline.h"

typedef struct {
  Rows rows;
  Rows *in;
  uint8_t *row;
  uint8_t table[256];
  float saturation;
} Adjust;

static inline float clampf(float v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

static const uint8_t *adjust_next(Rows *self) {
  Adjust *a = (Adjust *)self;
  const uint8_t *in = a->in->next(a->in);
  const float s = a->saturation;
  for (int x = 0; x < self->width; x++) {
    const uint8_t *p = in + 4 * x;
    uint8_t *q = a->row + 4 * x;
    const uint8_t r = a->table[p[0]], g = a->table[p[1]], b = a->table[p[2]];
    if (s == 1) {
      q[0] = r, q[1] = g, q[2] = b;
    } else {
      const float y = 0.299f * r + 0.587f * g + 0.114f * b;
      q[0] = (uint8_t)(clampf(y + s * (r - y)) + 0.5f);
      q[1] = (uint8_t)(clampf(y + s * (g - y)) + 0.5f);
      q[2] = (uint8_t)(clampf(y + s * (b - y)) + 0.5f);
    }
    q[3] = p[3];
  }
  return a->row;
}

static void adjust_close(Rows *self) {
  Adjust *a = (Adjust *)self;
  a->in->close(a->in);
  free(a->row);
  free(self);
}

Rows *rows_adjust(Rows *in, double brightness, double contrast, double gamma, double saturation) {
  if (brightness == 1 && contrast == 1 && gamma == 1 && saturation == 1) return in;
  Adjust *a = (Adjust *)rows_stage(sizeof(Adjust), in->width, in->height, adjust_next, adjust_close);
  a->in = in;
  a->rows.alpha = in->alpha;
  a->rows.grey = in->grey;
  a->saturation = (float)saturation;
  for (int v = 0; v < 256; v++) {
    double c = v * brightness;
    c = c < 0 ? 0 : c > 255 ? 255 : c;
    c = (c - 127.5) * contrast + 127.5;
    c = c < 0 ? 0 : c > 255 ? 255 : c;
    c = 255 * pow(c / 255, 1 / gamma);
    a->table[v] = (uint8_t)(c < 0 ? 0 : c > 255 ? 255 : c + 0.5);
  }
  a->row = lean_alloc((size_t)in->width * 4);
  return &a->rows;
}
