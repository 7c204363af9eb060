/*
 * Palette quantisation for lossy PNG (our own; pngquant's libimagequant is GPL-3): a sample of the rows, at most
 * SAMPLES pixels taken at an even stride, is split by median cut into boxes (each where its two halves' error is least),
 * and the fewest boxes that reach the target quality become the palette, refined by a few rounds of k-means on the
 * sample's distinct colours. The target is met when the mean error is low enough and no box has more than FAR_SHARE of
 * the sample farther from its colour than a distance that shrinks with the quality: a colour used by few pixels (a
 * syntax colour in a screenshot's text, an icon) is not averaged away for the sake of the mean. The rows are then
 * mapped to it one at a time with Floyd-Steinberg error diffusion, softened (DITHER of the error is carried, none under
 * DEAD_ZONE, none from a pixel on an edge, which hides it) so flat areas stay flat. Colours are compared premultiplied
 * by alpha; fully transparent pixels share one entry. The nearest entry is searched four entries at a time and a pixel's four channels are dithered as one
 * vector (WebAssembly SIMD128), each in the scalar code's order of operations.
 *
 * Memory does not follow the image: the sample (256 KiB) and two arrays as long (the sort's), a nearest-colour cache
 * (512 KiB), two rows of errors and one of the input.
 *
 * quality = (PSNR of the sample against the palette - 20) x 10 / 3, clamped to 0-100: 50 dB and over is 100,
 * 44 dB 80, 38 dB 60, 32 dB 40; and no box with more than FAR_SHARE of the sample farther than 4 + 0.2 x (100 -
 * quality) from its colour (premultiplied RGBA, Euclidean): 4 at quality 100, 8 at 80, 12 at 60, 16 at 40.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <wasm_simd128.h>

#include "lean.h"
#include "pipeline.h"

#define SAMPLES 65536
#define KMEANS_ROUNDS 6
#define DITHER 0.8f
#define DEAD_ZONE 3.0f
/* A pixel differing from a neighbour (premultiplied, in any channel) by more than this is on an edge. */
#define EDGE 16
/* The share of the sample (in thousandths) that may lie far from its box's colour; the distance, by quality. */
#define FAR_SHARE 1
#define FAR_DISTANCE(quality) (4 + 0.2 * (100 - (quality)))

/* The sample, premultiplied RGBA; fully transparent pixels are counted apart. */
static uint8_t (*sample)[4];
static int sampled, any_transparent;
/* The size of the rows sampled: what the rows mapped to the palette will have. */
static int sampled_width, sampled_height;
/* The palette, premultiplied (for matching) and as written (straight RGBA). */
static float pal[256][4];
static uint8_t pal_out[256][4];
static int pal_size, transparent_index = -1;
/* How many of the sample's pixels each entry took in k-means' last round (the transparent entry: 1). */
static uint32_t pal_count[256];
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
  sampled_width = in->width;
  sampled_height = in->height;
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
  int far; /* how many of its samples lie farther than far_limit from its mean */
} Box;

static double far_limit; /* squared */

static void box_stats(Box *b, const uint32_t *order) {
  memset(b->sum, 0, sizeof b->sum);
  memset(b->sq, 0, sizeof b->sq);
  for (int i = b->from; i < b->to; i++)
    for (int k = 0; k < 4; k++) {
      const double v = sample[order[i]][k];
      b->sum[k] += v;
      b->sq[k] += v * v;
    }
  const double n = b->to - b->from;
  double mean[4];
  for (int k = 0; k < 4; k++) mean[k] = b->sum[k] / n;
  b->far = 0;
  for (int i = b->from; i < b->to; i++) {
    double d = 0;
    for (int k = 0; k < 4; k++) {
      const double e = sample[order[i]][k] - mean[k];
      d += e * e;
    }
    b->far += d > far_limit;
  }
}

static double box_error(const Box *b) {
  const double n = b->to - b->from;
  double e = 0;
  for (int k = 0; k < 4; k++) e += b->sq[k] - b->sum[k] * b->sum[k] / n;
  return e;
}

/*
 * One stable counting-sort pass over `n` items by one byte of a key: with `bytes`, the item is an index and its key
 * byte bytes[item][byte]; without, the item is its own key and the byte is its byte-th from the lowest. `spare` as
 * long as `n`. One pass orders median cut's sample indices by a channel; four, low byte first, sort packed colours.
 */
static void counting_pass(uint32_t *items, int n, const uint8_t (*bytes)[4], int byte, uint32_t *spare) {
#define KEY(i) (bytes ? bytes[items[i]][byte] : items[i] >> 8 * byte & 255)
  int start[257] = {0};
  for (int i = 0; i < n; i++) start[KEY(i) + 1]++;
  for (int v = 0; v < 256; v++) start[v + 1] += start[v];
  for (int i = 0; i < n; i++) spare[start[KEY(i)]++] = items[i];
  memcpy(items, spare, (size_t)n * sizeof *items);
#undef KEY
}

/*
 * Where to split a box sorted by `channel`: between two different values of it, where the two halves' errors (over
 * every channel) add up to the least. A median split cuts runs of one colour in two, which a screenshot's few flat
 * colours are made of: both halves then get the same colour, and the palette an entry that no pixel takes.
 */
static int best_split(const Box *b, const uint32_t *order, int channel) {
  double sum[4] = {0}, sq[4] = {0}, best = INFINITY;
  int at = b->from + (b->to - b->from) / 2;
  for (int i = b->from; i < b->to - 1; i++) {
    const uint8_t *v = sample[order[i]];
    for (int k = 0; k < 4; k++) sum[k] += v[k], sq[k] += (double)v[k] * v[k];
    if (v[channel] == sample[order[i + 1]][channel]) continue;
    const double left = i + 1 - b->from, right = b->to - i - 1;
    double e = 0;
    for (int k = 0; k < 4; k++) {
      const double rest = b->sum[k] - sum[k];
      e += sq[k] - sum[k] * sum[k] / left + (b->sq[k] - sq[k]) - rest * rest / right;
    }
    if (e < best) best = e, at = i + 1;
  }
  return at;
}

static int quality_of(double sse, double count) {
  if (count <= 0) return 100;
  const double mse = sse / (count * 4);
  if (mse <= 1e-9) return 100;
  const double psnr = 10 * log10(255.0 * 255.0 / mse);
  const double q = (psnr - 20) * 10 / 3;
  return q < 0 ? 0 : q > 100 ? 100 : (int)q;
}

/* The palette by channel, four entries a vector (padded with entries that are never nearest), for nearest_of. */
static v128_t entry_channel[64][4];

static void entries_by_channel(void) {
  for (int c = 0; c < 256; c++)
    for (int k = 0; k < 4; k++) ((float *)&entry_channel[c >> 2][k])[c & 3] = c < pal_size ? pal[c][k] : 1e18f;
}

/*
 * The entry nearest to v (squared distance over premultiplied R, G, B, A), skipping `skip`: four entries at a time,
 * each distance summed in the same order as one at a time would, and of equal distances the lowest entry kept, so the
 * answer is the scalar search's. Its distance in *distance.
 */
static int nearest_of(const float v[4], int skip, float *distance) {
  const v128_t v0 = wasm_f32x4_splat(v[0]), v1 = wasm_f32x4_splat(v[1]), v2 = wasm_f32x4_splat(v[2]), v3 = wasm_f32x4_splat(v[3]);
  v128_t best_d = wasm_f32x4_splat(1e30f), best_i = wasm_i32x4_splat(0), index = wasm_i32x4_make(0, 1, 2, 3);
  const v128_t four = wasm_i32x4_splat(4), skipped = wasm_i32x4_splat(skip);
  for (int g = 0; g < (pal_size + 3) >> 2; g++, index = wasm_i32x4_add(index, four)) {
    const v128_t *e = entry_channel[g];
    const v128_t d0 = wasm_f32x4_sub(v0, e[0]), d1 = wasm_f32x4_sub(v1, e[1]), d2 = wasm_f32x4_sub(v2, e[2]), d3 = wasm_f32x4_sub(v3, e[3]);
    v128_t d = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(d0, d0), wasm_f32x4_mul(d1, d1)), wasm_f32x4_mul(d2, d2)),
                              wasm_f32x4_mul(d3, d3));
    const v128_t closer = wasm_v128_andnot(wasm_f32x4_lt(d, best_d), wasm_i32x4_eq(index, skipped));
    best_d = wasm_v128_bitselect(d, best_d, closer);
    best_i = wasm_v128_bitselect(index, best_i, closer);
  }
  float bd[4];
  int bi[4];
  wasm_v128_store(bd, best_d);
  wasm_v128_store(bi, best_i);
  int best = 0;
  for (int j = 1; j < 4; j++)
    if (bd[j] < bd[best] || (bd[j] == bd[best] && bi[j] < bi[best])) best = j;
  *distance = bd[best];
  return bi[best];
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
  uint32_t *order = lean_alloc((size_t)(sampled ? sampled : 1) * sizeof *order);
  for (int i = 0; i < sampled; i++) order[i] = (uint32_t)i;
  uint32_t *spare = lean_alloc((size_t)(sampled ? sampled : 1) * sizeof *spare);
  Box boxes[256];
  int count = 0;
  far_limit = FAR_DISTANCE(target) * FAR_DISTANCE(target);
  const int far_allowed = sampled * FAR_SHARE / 1000;
  if (sampled && room > 0) {
    boxes[0] = (Box){.from = 0, .to = sampled};
    box_stats(&boxes[0], order);
    count = 1;
    double total = box_error(&boxes[0]);
    while (count < room) {
      /* Split the box with the largest error while the mean is short of the target, then each with too many samples
         far from its colour, most first; along its widest channel. */
      const int mean_short = quality_of(total, sampled) < target;
      int worst = -1;
      double worst_error = 0;
      for (int i = 0; i < count; i++) {
        const double e = mean_short ? box_error(&boxes[i]) : boxes[i].far > far_allowed ? boxes[i].far : 0;
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
      counting_pass(order + b->from, b->to - b->from, (const uint8_t (*)[4])sample, channel, spare);
      const int middle = best_split(b, order, channel);
      Box right = {.from = middle, .to = b->to};
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
  /* k-means on the sample: each entry moves to the mean of the samples nearest it. Over the sample's distinct colours,
     each weighted by how often it occurs (a screenshot's 65536 samples hold a few thousand): the same sums, counts and
     error, exactly, as over every sample, since they are sums of integers in doubles. */
  uint32_t *colour = order, *weight = spare;
  for (int i = 0; i < sampled; i++) memcpy(&colour[i], sample[i], 4);
  for (int byte = 0; byte < 4; byte++) counting_pass(colour, sampled, NULL, byte, weight);
  int distinct = 0;
  for (int i = 0; i < sampled; i++) {
    if (distinct && colour[distinct - 1] == colour[i]) {
      weight[distinct - 1]++;
    } else {
      colour[distinct] = colour[i];
      weight[distinct++] = 1;
    }
  }
  double sse = 0;
  for (int round = 0; round <= KMEANS_ROUNDS && pal_size; round++) {
    double sums[256][4] = {{0}};
    double members[256] = {0};
    sse = 0;
    entries_by_channel();
    for (int i = 0; i < distinct; i++) {
      uint8_t v[4];
      memcpy(v, &colour[i], 4);
      const float fv[4] = {v[0], v[1], v[2], v[3]};
      float best_d;
      const int best = nearest_of(fv, -1, &best_d);
      const double w = weight[i];
      sse += best_d * w;
      members[best] += w;
      for (int k = 0; k < 4; k++) sums[best][k] += v[k] * w;
    }
    if (round == KMEANS_ROUNDS) {
      for (int c = 0; c < pal_size; c++) pal_count[c] = (uint32_t)members[c];
      break;
    }
    for (int c = 0; c < pal_size; c++)
      if (members[c])
        for (int k = 0; k < 4; k++) pal[c][k] = (float)(sums[c][k] / members[c]);
  }
  reached = quality_of(sse, sampled);
  free(order);
  free(spare);
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
    pal_count[pal_size] = 1;
    memset(pal_out[pal_size], 0, 4);
    memset(pal[pal_size], 0, sizeof pal[pal_size]);
    pal_size++;
  }
  free(sample);
  sample = NULL;
  return pal_size;
}

EXPORT(px_quant_quality) int quant_quality(void) { return reached; }

int quant_palette(int *width, int *height, const uint8_t (**rgba)[4], const uint32_t **counts) {
  *width = sampled_width;
  *height = sampled_height;
  *rgba = (const uint8_t (*)[4])pal_out;
  *counts = pal_count;
  return pal_size;
}

/* ---------------------------------------------------------------- mapping rows */

typedef struct {
  Rows rows;
  Rows *in;
  uint8_t *row;
  uint8_t *here, *above; /* the input row and the one before, premultiplied */
  int first;
  float *error, *next_error; /* (width + 2) x 4: this row's carried error and the next row's */
  uint16_t *cache;            /* an opaque colour's nearest entry by 6 bits of R, G and B; 0xFFFF: not known yet */
} Remap;

static const uint8_t *remap_next(Rows *self) {
  Remap *r = (Remap *)self;
  const uint8_t *in = r->in->next(r->in);
  const int w = r->rows.width;
  memset(r->next_error, 0, (size_t)(w + 2) * 4 * sizeof(float));
  for (int x = 0; x < w; x++) premultiply(in + 4 * x, r->here + 4 * x);
  if (r->first) memcpy(r->above, r->here, (size_t)w * 4);
  r->first = 0;
  int previous = -1; /* the entry of the pixel to the left */
  for (int x = 0; x < w; x++) {
    const uint8_t *p = in + 4 * x;
    uint8_t *out = r->row + 4 * x;
    if (p[3] == 0 && transparent_index >= 0) {
      /* A fully transparent pixel among nearly transparent ones keeps its left neighbour's entry when that is within 1
         level of transparent (premultiplied): the same to see, and a noisy wallpaper's scattered alpha-0 pixels no
         longer break every run of indices (a 1920x1200 one: 0.37x the bytes). */
      const int c = previous >= 0 && pal[previous][0] <= 1 && pal[previous][1] <= 1 && pal[previous][2] <= 1 && pal[previous][3] <= 1 ? previous : transparent_index;
      memcpy(out, pal_out[c], 4);
      previous = c;
      continue;
    }
    const uint8_t *pm = r->here + 4 * x, *left = x > 0 ? pm - 4 : pm, *right = x + 1 < w ? pm + 4 : pm, *up = r->above + 4 * x;
    int edge = 0;
    for (int k = 0; k < 4; k++)
      edge |= abs(pm[k] - left[k]) > EDGE || abs(pm[k] - right[k]) > EDGE || abs(pm[k] - up[k]) > EDGE;
    /* The four channels as one vector: the same arithmetic, in the same order, as channel by channel. */
    const v128_t t = wasm_f32x4_add(wasm_f32x4_convert_i32x4(wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(pm)))), wasm_v128_load(r->error + (x + 1) * 4));
    v128_t v = wasm_f32x4_pmin(wasm_f32x4_pmax(t, wasm_f32x4_splat(0)), wasm_f32x4_splat(255));
    /* Premultiplied, no colour exceeds its alpha. */
    v = wasm_f32x4_pmin(v, wasm_i32x4_shuffle(v, v, 3, 3, 3, 3));
    const v128_t iv = wasm_i32x4_trunc_sat_f32x4(v);
    int c;
    /* Only opaque colours are looked up by 6 bits a channel: for a translucent one, the same cell would span four
       levels of alpha-scaled colour, into which a shadow's or an edge's few levels of colour fall whole. */
    if (wasm_i32x4_extract_lane(iv, 3) == 255) {
      const int key = (wasm_i32x4_extract_lane(iv, 0) >> 2) << 12 | (wasm_i32x4_extract_lane(iv, 1) >> 2) << 6 | wasm_i32x4_extract_lane(iv, 2) >> 2;
      c = r->cache[key];
      if (c == 0xFFFF) {
        float fv[4], d;
        wasm_v128_store(fv, v);
        c = r->cache[key] = (uint16_t)nearest_of(fv, transparent_index, &d);
      }
    } else {
      float fv[4], d;
      wasm_v128_store(fv, v);
      c = nearest_of(fv, transparent_index, &d);
    }
    previous = c;
    memcpy(out, pal_out[c], 4);
    const v128_t raw = wasm_f32x4_sub(v, wasm_v128_load(pal[c]));
    /* Errors under DEAD_ZONE are not carried: flat areas map to one colour instead of a pattern of two; nor is the
       error of a pixel on an edge, where it would spread speckles into the flat side. */
    const v128_t e = wasm_v128_andnot(wasm_f32x4_mul(raw, wasm_f32x4_splat(edge ? 0.f : DITHER)), wasm_f32x4_lt(wasm_f32x4_abs(raw), wasm_f32x4_splat(DEAD_ZONE)));
    float *here = r->error + (x + 2) * 4, *below = r->next_error + x * 4;
#define SPREAD(at, weight) wasm_v128_store(at, wasm_f32x4_add(wasm_v128_load(at), wasm_f32x4_div(wasm_f32x4_mul(e, wasm_f32x4_splat(weight)), wasm_f32x4_splat(16))))
    SPREAD(here, 7);
    SPREAD(below, 3);
    SPREAD(below + 4, 5);
    SPREAD(below + 8, 1);
#undef SPREAD
  }
  uint8_t *swap = r->above;
  r->above = r->here;
  r->here = swap;
  float *t = r->error;
  r->error = r->next_error;
  r->next_error = t;
  return r->row;
}

static void remap_close(Rows *self) {
  Remap *r = (Remap *)self;
  r->in->close(r->in);
  free(r->row);
  free(r->here);
  free(r->above);
  free(r->error);
  free(r->next_error);
  free(r->cache);
  free(r);
}

/* The rows mapped to the palette quant_build made, dithered: at most pal_size distinct colours come out. */
Rows *rows_remap(Rows *in) {
  if (!pal_size) fail("no palette built");
  entries_by_channel();
  Remap *r = (Remap *)rows_stage(sizeof(Remap), in->width, in->height, remap_next, remap_close);
  r->in = in;
  r->rows.alpha = transparent_index >= 0 || in->alpha;
  r->rows.grey = 0;
  r->row = lean_alloc((size_t)in->width * 4);
  r->here = lean_alloc((size_t)in->width * 4);
  r->above = lean_alloc((size_t)in->width * 4);
  r->first = 1;
  r->error = lean_alloc((size_t)(in->width + 2) * 4 * sizeof(float));
  r->next_error = lean_alloc((size_t)(in->width + 2) * 4 * sizeof(float));
  memset(r->error, 0, (size_t)(in->width + 2) * 4 * sizeof(float));
  r->cache = lean_alloc((size_t)1 << 18 << 1);
  memset(r->cache, 0xFF, (size_t)1 << 18 << 1);
  return &r->rows;
}
