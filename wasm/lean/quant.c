/*
 * Palette quantisation for lossy PNG (our own; pngquant's libimagequant is GPL-3): a sample of the rows, at most
 * SAMPLES pixels taken at an even stride, is split by median cut into boxes, and the fewest boxes whose error reaches
 * the target quality become the palette, refined by a few rounds of k-means on the sample. The rows are then mapped
 * to it one at a time with Floyd-Steinberg error diffusion, softened (DITHER of the error is carried, none under DEAD_ZONE) so flat areas
 * stay flat. Colours are compared premultiplied by alpha; fully transparent pixels share one entry.
 *
 * Memory does not follow the image: the sample (256 KiB), a nearest-colour cache (2 MiB) and two rows of errors.
 *
 * quality = (PSNR of the sample against the palette - 20) x 10 / 3, clamped to 0-100: 50 dB and over is 100,
 * 44 dB 80, 38 dB 60, 32 dB 40.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lean.h"
#include "pipeline.h"

#define SAMPLES 65536
#define KMEANS_ROUNDS 6
#define DITHER 0.8f
#define DEAD_ZONE 3.0f

/* The sample, premultiplied RGBA; fully transparent pixels are counted apart. */
static uint8_t (*sample)[4];
static int sampled, any_transparent;
/* The palette, premultiplied (for matching) and as written (straight RGBA). */
static float pal[256][4];
static uint8_t pal_out[256][4];
static int pal_size, transparent_index = -1;
static int reached;

static void premultiply(const uint8_t *p, uint8_t *out) {
  const int a = p[3];
  out[0] = (uint8_t)((p[0] * a + 127) / 255);
  out[1] = (uint8_t)((p[1] * a + 127) / 255);
  out[2] = (uint8_t)((p[2] * a + 127) / 255);
  out[3] = (uint8_t)a;
}

/** Pass 1: every row of `in` read, every k-th pixel kept (k so that at most SAMPLES are); then `in` is closed. */
void quant_sample(Rows *in) {
  const uint64_t pixels = (uint64_t)in->width * (uint64_t)in->height;
  const uint64_t step = pixels > SAMPLES ? (pixels + SAMPLES - 1) / SAMPLES : 1;
  free(sample);
  sample = lean_alloc(SAMPLES * sizeof *sample);
  sampled = any_transparent = 0;
  uint64_t index = 0, next = 0;
  for (int y = 0; y < in->height; y++) {
    const uint8_t *row = in->next(in);
    for (int x = 0; x < in->width; x++, index++) {
      /* Every transparent pixel counts (one is enough for the palette to need its entry), not only sampled ones. */
      if (row[4 * x + 3] == 0) {
        any_transparent = 1;
        if (index == next) next += step;
        continue;
      }
      if (index != next) continue;
      next += step;
      if (sampled < SAMPLES) premultiply(row + 4 * x, sample[sampled++]);
    }
  }
  in->close(in);
}

/* ---------------------------------------------------------------- median cut */

typedef struct {
  int from, to; /* sample indices [from, to) */
  double sum[4], sq[4];
} Box;

static void box_stats(Box *b, const int *order) {
  memset(b->sum, 0, sizeof b->sum);
  memset(b->sq, 0, sizeof b->sq);
  for (int i = b->from; i < b->to; i++)
    for (int k = 0; k < 4; k++) {
      const double v = sample[order[i]][k];
      b->sum[k] += v;
      b->sq[k] += v * v;
    }
}

static double box_error(const Box *b) {
  const double n = b->to - b->from;
  double e = 0;
  for (int k = 0; k < 4; k++) e += b->sq[k] - b->sum[k] * b->sum[k] / n;
  return e;
}

static int sort_channel;
static int by_channel(const void *a, const void *b) {
  return (int)sample[*(const int *)a][sort_channel] - (int)sample[*(const int *)b][sort_channel];
}

static int quality_of(double sse, double count) {
  if (count <= 0) return 100;
  const double mse = sse / (count * 4);
  if (mse <= 1e-9) return 100;
  const double psnr = 10 * log10(255.0 * 255.0 / mse);
  const double q = (psnr - 20) * 10 / 3;
  return q < 0 ? 0 : q > 100 ? 100 : (int)q;
}

/*
 * The palette: the fewest median-cut boxes (at most `max_colours`, one of them transparent when the image has
 * transparent pixels) whose error reaches `target`, refined by k-means. Returns its size; px_quant_quality the
 * quality reached.
 */
EXPORT(px_quant_build) int quant_build(int max_colours, int target) {
  if (!sample) fail("no palette sample");
  transparent_index = -1;
  const int room = any_transparent ? max_colours - 1 : max_colours;
  int *order = lean_alloc((size_t)(sampled ? sampled : 1) * sizeof *order);
  for (int i = 0; i < sampled; i++) order[i] = i;
  Box boxes[256];
  int count = 0;
  if (sampled && room > 0) {
    boxes[0] = (Box){0, sampled, {0}, {0}};
    box_stats(&boxes[0], order);
    count = 1;
    double total = box_error(&boxes[0]);
    while (count < room && quality_of(total, sampled) < target) {
      /* Split the box with the largest error, at the median of its widest channel. */
      int worst = -1;
      double worst_error = 0;
      for (int i = 0; i < count; i++) {
        const double e = box_error(&boxes[i]);
        if (boxes[i].to - boxes[i].from > 1 && e > worst_error) worst = i, worst_error = e;
      }
      if (worst < 0) break;
      Box *b = &boxes[worst];
      const double n = b->to - b->from;
      int channel = 0;
      double widest = -1;
      for (int k = 0; k < 4; k++) {
        const double variance = b->sq[k] - b->sum[k] * b->sum[k] / n;
        if (variance > widest) widest = variance, channel = k;
      }
      sort_channel = channel;
      qsort(order + b->from, (size_t)(b->to - b->from), sizeof *order, by_channel);
      const int middle = b->from + (b->to - b->from) / 2;
      Box right = {middle, b->to, {0}, {0}};
      b->to = middle;
      box_stats(b, order);
      box_stats(&right, order);
      boxes[count++] = right;
      total = 0;
      for (int i = 0; i < count; i++) total += box_error(&boxes[i]);
    }
  }
  pal_size = 0;
  for (int i = 0; i < count; i++) {
    const double n = boxes[i].to - boxes[i].from;
    for (int k = 0; k < 4; k++) pal[pal_size][k] = (float)(boxes[i].sum[k] / n);
    pal_size++;
  }
  /* k-means on the sample: each entry moves to the mean of the samples nearest it. */
  double sse = 0;
  int *nearest = order; /* reused: the assignment of each sample */
  for (int round = 0; round <= KMEANS_ROUNDS && pal_size; round++) {
    double sums[256][4] = {{0}};
    int members[256] = {0};
    sse = 0;
    for (int i = 0; i < sampled; i++) {
      int best = 0;
      float best_d = 1e30f;
      for (int c = 0; c < pal_size; c++) {
        float d = 0;
        for (int k = 0; k < 4; k++) {
          const float diff = (float)sample[i][k] - pal[c][k];
          d += diff * diff;
        }
        if (d < best_d) best_d = d, best = c;
      }
      nearest[i] = best;
      sse += best_d;
      members[best]++;
      for (int k = 0; k < 4; k++) sums[best][k] += sample[i][k];
    }
    if (round == KMEANS_ROUNDS) break;
    for (int c = 0; c < pal_size; c++)
      if (members[c])
        for (int k = 0; k < 4; k++) pal[c][k] = (float)(sums[c][k] / members[c]);
  }
  reached = quality_of(sse, sampled);
  free(order);
  for (int c = 0; c < pal_size; c++) {
    const float a = pal[c][3] < 1 ? 1 : pal[c][3];
    for (int k = 0; k < 3; k++) {
      const float v = pal[c][k] * 255 / a;
      pal_out[c][k] = (uint8_t)(v > 255 ? 255 : v + 0.5f);
    }
    pal_out[c][3] = (uint8_t)(pal[c][3] + 0.5f);
    /* Match against what is written, so that the sink sees exactly these colours. */
    uint8_t pm[4];
    premultiply(pal_out[c], pm);
    for (int k = 0; k < 4; k++) pal[c][k] = pm[k];
  }
  if (any_transparent) {
    transparent_index = pal_size;
    memset(pal_out[pal_size], 0, 4);
    memset(pal[pal_size], 0, sizeof pal[pal_size]);
    pal_size++;
  }
  free(sample);
  sample = NULL;
  return pal_size;
}

EXPORT(px_quant_quality) int quant_quality(void) { return reached; }

/* ---------------------------------------------------------------- mapping rows */

typedef struct {
  Rows rows;
  Rows *in;
  uint8_t *row;
  float *error, *next_error; /* (width + 2) x 4: this row's carried error and the next row's */
  uint16_t *cache;            /* nearest entry by 6 bits of R, G, B and 2 of alpha; 0xFFFF: not known yet */
} Remap;

static int nearest_entry(const float *v) {
  int best = 0;
  float best_d = 1e30f;
  for (int c = 0; c < pal_size; c++) {
    if (c == transparent_index) continue;
    float d = 0;
    for (int k = 0; k < 4; k++) {
      const float diff = v[k] - pal[c][k];
      d += diff * diff;
    }
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

static const uint8_t *remap_next(Rows *self) {
  Remap *r = (Remap *)self;
  const uint8_t *in = r->in->next(r->in);
  const int w = r->rows.width;
  memset(r->next_error, 0, (size_t)(w + 2) * 4 * sizeof(float));
  for (int x = 0; x < w; x++) {
    const uint8_t *p = in + 4 * x;
    uint8_t *out = r->row + 4 * x;
    if (p[3] == 0 && transparent_index >= 0) {
      memcpy(out, pal_out[transparent_index], 4);
      continue;
    }
    uint8_t pm[4];
    premultiply(p, pm);
    float v[4];
    for (int k = 0; k < 4; k++) {
      const float t = pm[k] + r->error[(x + 1) * 4 + k];
      v[k] = t < 0 ? 0 : t > 255 ? 255 : t;
    }
    /* Premultiplied, no colour exceeds its alpha. */
    for (int k = 0; k < 3; k++) if (v[k] > v[3]) v[k] = v[3];
    const int key = ((int)v[0] >> 2) << 14 | ((int)v[1] >> 2) << 8 | ((int)v[2] >> 2) << 2 | ((int)v[3] >> 6);
    int c = r->cache[key];
    if (c == 0xFFFF) c = r->cache[key] = (uint16_t)nearest_entry(v);
    memcpy(out, pal_out[c], 4);
    for (int k = 0; k < 4; k++) {
      const float raw = v[k] - pal[c][k];
      /* Errors under DEAD_ZONE are not carried: flat areas map to one colour instead of a pattern of two. */
      const float e = fabsf(raw) < DEAD_ZONE ? 0 : raw * DITHER;
      r->error[(x + 2) * 4 + k] += e * 7 / 16;
      r->next_error[x * 4 + k] += e * 3 / 16;
      r->next_error[(x + 1) * 4 + k] += e * 5 / 16;
      r->next_error[(x + 2) * 4 + k] += e * 1 / 16;
    }
  }
  float *t = r->error;
  r->error = r->next_error;
  r->next_error = t;
  return r->row;
}

static void remap_close(Rows *self) {
  Remap *r = (Remap *)self;
  r->in->close(r->in);
  free(r->row);
  free(r->error);
  free(r->next_error);
  free(r->cache);
  free(r);
}

/* The rows mapped to the palette quant_build made, dithered: at most pal_size distinct colours come out. */
Rows *rows_remap(Rows *in) {
  if (!pal_size) fail("no palette built");
  Remap *r = (Remap *)rows_stage(sizeof(Remap), in->width, in->height, remap_next, remap_close);
  r->in = in;
  r->rows.alpha = transparent_index >= 0 || in->alpha;
  r->rows.grey = 0;
  r->row = lean_alloc((size_t)in->width * 4);
  r->error = lean_alloc((size_t)(in->width + 2) * 4 * sizeof(float));
  r->next_error = lean_alloc((size_t)(in->width + 2) * 4 * sizeof(float));
  memset(r->error, 0, (size_t)(in->width + 2) * 4 * sizeof(float));
  r->cache = lean_alloc((size_t)1 << 20 << 1);
  memset(r->cache, 0xFF, (size_t)1 << 20 << 1);
  return &r->rows;
}
