/*
 * The perceptual score for quality=auto: SSIMULACRA 2 (Jon Sneyers, Cloudinary, 2022-2023; the metric's design and its
 * 108 published weights, written here from its description), and the sample of an image it is computed on.
 *
 * The sample (a sink): the tiles of the image that src/pipeline/auto-quality.ts chooses (`sampleSpans`: the image itself
 * when it is small, else tiles at even steps across it), each at full resolution, so compression artefacts are judged
 * at the size they are seen at. The tiles are laid out side by side in one RGBA buffer; the caller cuts them apart and
 * encodes each on its own.
 *
 * The score (0-100, 100 = identical; 90 "visually lossless", 70 "high quality", 50 "medium"): both images to linear
 * RGB and then to XYB (the opsin absorbance of JPEG XL, cube root, rescaled to about 0-1), at six scales (halved in
 * linear RGB each time); at each, per channel, a Gaussian-weighted SSIM without the luminance denominator and two edge
 * maps (ringing: an edge only in the distorted image; blur: an edge only in the original), each pooled by its mean and
 * its 4-norm. The 108 pooled errors are weighted, summed and mapped to the score. The blur here is a separable FIR
 * Gaussian (sigma 1.5, zero outside the image) where the reference uses a recursive approximation: scores agree to a
 * fraction of a point (scripts/auto-quality-check.mjs measures it against the reference tool). It is computed on rows
 * (score_sink), so quality=auto can check the whole answer against the rows the pipeline encoded.
 *
 * Memory: the score reads both images a row at a time and holds, per scale, 11 rows of 21 float planes (about 1 KiB per
 * pixel of the width, 1.9 over the six scales; twice with transparency): 7.4 MiB for a 4032 px wide image, freed before returning.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lean.h"
#include "pipeline.h"

#define SCALES 6
#define RADIUS 5
#define SIGMA 1.5f
#define C2 0.0009f

/* ---------------------------------------------------------------- the sample */

/* Checks that `count` spans (start, length) lie inside 0..length in increasing order without overlapping; returns their total. */
static int span_total(const int32_t *span, int count, int length) {
  int total = 0, end = 0;
  if (count < 1 || count > 16) fail("bad sample spans");
  for (int i = 0; i < count; i++) {
    if (span[2 * i] < end || span[2 * i + 1] < 1 || span[2 * i] + span[2 * i + 1] > length) fail("bad sample spans");
    end = span[2 * i] + span[2 * i + 1];
    total += span[2 * i + 1];
  }
  return total;
}

uint8_t *mosaic_sink(Rows *in, const int32_t *columns, int nx, const int32_t *rows, int ny) {
  const int width = span_total(columns, nx, in->width), height = span_total(rows, ny, in->height);
  uint8_t *out = lean_alloc((size_t)width * height * 4);
  int band = 0, row = 0;
  for (int y = 0; y < in->height; y++) {
    const uint8_t *line = in->next(in);
    if (band >= ny || y < rows[2 * band]) continue;
    uint8_t *dst = out + (size_t)row * width * 4;
    for (int i = 0; i < nx; i++) {
      memcpy(dst, line + (size_t)columns[2 * i] * 4, (size_t)columns[2 * i + 1] * 4);
      dst += (size_t)columns[2 * i + 1] * 4;
    }
    row++;
    if (y + 1 == rows[2 * band] + rows[2 * band + 1]) band++;
  }
  in->close(in);
  return out;
}

/* ---------------------------------------------------------------- SSIMULACRA 2 */

/* Weights of the 108 pooled errors: channel (X, Y, B), scale (1:1 to 1:32), norm (1, 4), map (SSIM, ringing, blur). */
static const double WEIGHTS[108] = {
    0.0, 0.0007376606707406586, 0.0, 0.0, 0.0007793481682867309, 0.0, 0.0, 0.0004371155730107379, 0.0,
    1.1041726426657346, 0.00066284834129271, 0.00015231632783718752, 0.0, 0.0016406437456599754, 0.0,
    1.8422455520539298, 11.441172603757666, 0.0, 0.0007989109436015163, 0.000176816438078653, 0.0,
    1.8787594979546387, 10.94906990605142, 0.0, 0.0007289346991508072, 0.9677937080626833, 0.0,
    0.00014003424285435884, 0.9981766977854967, 0.00031949755934435053, 0.0004550992113792063, 0.0, 0.0,
    0.0013648766163243398, 0.0, 0.0, 0.0, 0.0, 0.0, 7.466890328078848, 0.0, 17.445833984131262,
    0.0006235601634041466, 0.0, 0.0, 6.683678146179332, 0.00037724407979611296, 1.027889937768264,
    225.20515300849274, 0.0, 0.0, 19.213238186143016, 0.0011401524586618361, 0.001237755635509985,
    176.39317598450694, 0.0, 0.0, 24.43300999870476, 0.28520802612117757, 0.0004485436923833408, 0.0, 0.0, 0.0,
    34.77906344483772, 44.835625328877896, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0008680556573291698, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0005313191874358747, 0.0, 0.00016533814161379112, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0004179171803251336, 0.0017290828234722833, 0.0, 0.0020827005846636437, 0.0, 0.0, 8.826982764996862,
    23.19243343998926, 0.0, 95.1080498811086, 0.9863978034400682, 0.9834382792465353, 0.0012286405048278493,
    171.2667255897307, 0.9807858872435379, 0.0, 0.0, 0.0, 0.0005130064588990679, 0.0, 0.00010854057858411537,
};

/* Opsin absorbance (rows: L, M, S) and its bias. */
static const float OPSIN[9] = {0.30f, 0.622f, 0.078f, 0.23f, 0.692f, 0.078f, 0.24342268924547819f, 0.20476744424496821f, 0.55180986650955360f};
static const float BIAS = 0.0037930732552754493f;

static float kernel[2 * RADIUS + 1];

static float srgb_to_linear(float v) { return v <= 0.04045f ? v / 12.92f : powf((v + 0.055f) / 1.055f, 2.4f); }

/* 8-bit sRGB RGBA -> three planes of linear RGB, alpha blended over `bg` (in sRGB's encoding, as the reference). */
static void to_linear(const uint8_t *rgba, size_t n, float bg, float *r, float *g, float *b) {
  static float lut[256];
  if (lut[255] == 0.0f)
    for (int i = 0; i < 256; i++) lut[i] = srgb_to_linear(i / 255.0f);
  float *out[3] = {r, g, b};
  for (size_t i = 0; i < n; i++) {
    const uint8_t *p = rgba + 4 * i;
    for (int c = 0; c < 3; c++) out[c][i] = p[3] == 255 ? lut[p[c]] : srgb_to_linear((p[c] / 255.0f) * (p[3] / 255.0f) + bg * (1.0f - p[3] / 255.0f));
  }
}

/* Linear RGB -> X, Y, B-Y, each shifted and scaled into about 0-1. */
static void to_xyb(const float *r, const float *g, const float *b, size_t n, float *x, float *y, float *z) {
  const float cbrt_bias = cbrtf(BIAS);
  for (size_t i = 0; i < n; i++) {
    float lms[3];
    for (int k = 0; k < 3; k++) {
      const float mixed = OPSIN[3 * k] * r[i] + OPSIN[3 * k + 1] * g[i] + OPSIN[3 * k + 2] * b[i] + BIAS;
      lms[k] = cbrtf(mixed > 0.0f ? mixed : 0.0f) - cbrt_bias;
    }
    const float yy = 0.5f * (lms[0] + lms[1]);
    x[i] = 0.5f * (lms[0] - lms[1]) * 14.0f + 0.42f;
    y[i] = yy + 0.01f;
    z[i] = (lms[2] - yy) + 0.55f;
  }
}

static double fourth(double v) { return v * v * v * v; }

/*
 * The score is computed on rows as they come, so what it holds is a few rows per scale, not planes of the image: at
 * each scale a ring of 2 x RADIUS + 1 rows holds both images in XYB and the five quantities the SSIM needs, blurred
 * across; a row is blurred down and pooled once the ring holds the rows RADIUS below it, and every second row is
 * halved with the one before it into the next scale. The arithmetic is the order a whole-plane blur does it in.
 */
#define RING (2 * RADIUS + 1)
enum { XYB = 6, BLURRED = 15, PER_ROW = XYB + BLURRED };

typedef struct {
  int width, height, in, out;
  float *ring;    /* RING rows of PER_ROW planes: X, Y, B of each image, then per channel mu1, mu2, s11, s22, s12 across */
  float *pending; /* the first of a pair of linear rows (6 planes) to halve into the next scale, when `paired` */
  int paired;
  double sums[3][6];
} Level;

typedef struct {
  Level level[SCALES];
  int levels;
  float bg;
  float *linear; /* 6 planes of the full width: a row of each image in linear RGB, then scratch for the scales below */
  float *down;   /* five rows: blurred down */
} Scorer;

static float *slot(Level *l, int y, int plane) { return l->ring + ((size_t)(y % RING) * PER_ROW + plane) * l->width; }

/* A row's Gaussian across (zero outside the image). */
static void blur_across(const float *row, float *dst, int w) {
  memset(dst, 0, (size_t)w * sizeof *dst);
  for (int k = -RADIUS; k <= RADIUS; k++) {
    const float weight = kernel[k + RADIUS];
    const int lo = k < 0 ? -k : 0, hi = k > 0 ? w - k : w;
    for (int x = lo; x < hi; x++) dst[x] += weight * row[x + k];
  }
}

/* Row `y` of the level blurred down from the ring, then pooled into its sums. */
static void pool_row(Scorer *s, Level *l, int y) {
  const int w = l->width, h = l->height;
  const int lo = y - RADIUS < 0 ? -y : -RADIUS, hi = y + RADIUS >= h ? h - 1 - y : RADIUS;
  for (int c = 0; c < 3; c++) {
    for (int q = 0; q < 5; q++) {
      float *dst = s->down + (size_t)q * w;
      memset(dst, 0, (size_t)w * sizeof *dst);
      for (int k = lo; k <= hi; k++) {
        const float weight = kernel[k + RADIUS];
        const float *src = slot(l, y + k, XYB + 5 * c + q);
        for (int x = 0; x < w; x++) dst[x] += weight * src[x];
      }
    }
    const float *a = slot(l, y, c), *b = slot(l, y, 3 + c), *mu1 = s->down, *mu2 = mu1 + w, *s11 = mu2 + w, *s22 = s11 + w, *s12 = s22 + w;
    double *sums = l->sums[c];
    for (int x = 0; x < w; x++) {
      const float m1 = mu1[x], m2 = mu2[x];
      const float num_m = 1.0f - (m1 - m2) * (m1 - m2);
      const float num_s = 2.0f * (s12[x] - m1 * m2) + C2;
      const float den_s = (s11[x] - m1 * m1) + (s22[x] - m2 * m2) + C2;
      double d = 1.0 - (double)(num_m * num_s / den_s);
      if (d < 0.0) d = 0.0;
      sums[0] += d;
      sums[1] += fourth(d);
      const double edge = (1.0 + fabs((double)b[x] - m2)) / (1.0 + fabs((double)a[x] - m1)) - 1.0;
      const double ringing = edge > 0.0 ? edge : 0.0, lost = edge < 0.0 ? -edge : 0.0;
      sums[2] += ringing;
      sums[3] += fourth(ringing);
      sums[4] += lost;
      sums[5] += fourth(lost);
    }
  }
}

static void push_row(Scorer *s, int index, float *const lin[6]);

/* Two linear rows (6 planes each) of level `index` halved into a row of the next: 2x2 means, the last column repeated. */
static void halve_into(Scorer *s, int index, float *const first[6], float *const second[6]) {
  const Level *l = &s->level[index];
  const int w = l->width, ow = (w + 1) / 2;
  float *out[6];
  for (int p = 0; p < 6; p++) {
    out[p] = s->linear + (size_t)(6 * (index + 1) + p) * s->level[0].width; /* this level's scratch, past the first row */
    for (int ox = 0; ox < ow; ox++) {
      const int x0 = 2 * ox, x1 = 2 * ox + 1 < w ? 2 * ox + 1 : w - 1;
      float sum = 0.0f;
      sum += first[p][x0];
      sum += first[p][x1];
      sum += second[p][x0];
      sum += second[p][x1];
      out[p][ox] = sum * 0.25f;
    }
  }
  push_row(s, index + 1, out);
}

/* One row of linear RGB (reference, then distorted) into level `index`. */
static void push_row(Scorer *s, int index, float *const lin[6]) {
  Level *l = &s->level[index];
  const int w = l->width, y = l->in++;
  float *x1 = slot(l, y, 0), *x2 = slot(l, y, 3);
  to_xyb(lin[0], lin[1], lin[2], w, x1, x1 + w, x1 + 2 * (size_t)w);
  to_xyb(lin[3], lin[4], lin[5], w, x2, x2 + w, x2 + 2 * (size_t)w);
  float *product = s->down;
  for (int c = 0; c < 3; c++) {
    const float *a = slot(l, y, c), *b = slot(l, y, 3 + c);
    float *blurred = slot(l, y, XYB + 5 * c);
    blur_across(a, blurred, w);
    blur_across(b, blurred + w, w);
    for (int x = 0; x < w; x++) product[x] = a[x] * a[x];
    blur_across(product, blurred + 2 * (size_t)w, w);
    for (int x = 0; x < w; x++) product[x] = b[x] * b[x];
    blur_across(product, blurred + 3 * (size_t)w, w);
    for (int x = 0; x < w; x++) product[x] = a[x] * b[x];
    blur_across(product, blurred + 4 * (size_t)w, w);
  }
  if (y - RADIUS >= 0) pool_row(s, l, y - RADIUS);
  l->out = y - RADIUS + 1 > 0 ? y - RADIUS + 1 : 0;
  if (index + 1 >= s->levels) return;
  float *pending[6];
  for (int p = 0; p < 6; p++) pending[p] = l->pending + (size_t)p * w;
  if (!l->paired) {
    for (int p = 0; p < 6; p++) memcpy(pending[p], lin[p], (size_t)w * sizeof(float));
    l->paired = 1;
  } else {
    l->paired = 0;
    halve_into(s, index, pending, lin);
  }
}

static Scorer *scorer_new(int width, int height, float bg) {
  if (kernel[RADIUS] == 0.0f) {
    float sum = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; k++) sum += kernel[k + RADIUS] = expf(-(float)(k * k) / (2.0f * SIGMA * SIGMA));
    for (int k = 0; k <= 2 * RADIUS; k++) kernel[k] /= sum;
  }
  Scorer *s = lean_alloc(sizeof *s);
  memset(s, 0, sizeof *s);
  s->bg = bg;
  /* a scale is computed while the one before is 8 px or more (as the reference: the last may be smaller) */
  int w = width, h = height;
  for (int scale = 0; scale < SCALES && w >= 8 && h >= 8; scale++) {
    if (scale > 0) {
      w = (w + 1) / 2;
      h = (h + 1) / 2;
    }
    Level *l = &s->level[s->levels++];
    l->width = w;
    l->height = h;
  }
  /* the full-width row, then 6 planes of scratch per level for the halved rows pushed into the next */
  s->linear = lean_alloc((size_t)width * 6 * (1 + SCALES) * sizeof(float));
  s->down = lean_alloc((size_t)width * 5 * sizeof(float));
  for (int i = 0; i < s->levels; i++) {
    Level *l = &s->level[i];
    l->ring = lean_alloc((size_t)RING * PER_ROW * l->width * sizeof(float));
    l->pending = lean_alloc((size_t)6 * l->width * sizeof(float));
  }
  return s;
}

static void scorer_row(Scorer *s, const uint8_t *ref, const uint8_t *dist) {
  if (!s->levels) return;
  const int w = s->level[0].width;
  float *lin[6];
  for (int p = 0; p < 6; p++) lin[p] = s->linear + (size_t)p * w;
  to_linear(ref, w, s->bg, lin[0], lin[1], lin[2]);
  to_linear(dist, w, s->bg, lin[3], lin[4], lin[5]);
  push_row(s, 0, lin);
}

/* The rows left to pool at each scale (an odd last row halved with itself), the score, and the scorer freed. */
static double scorer_finish(Scorer *s) {
  double pooled[3][SCALES][6] = {{{0}}};
  for (int i = 0; i < s->levels; i++) {
    Level *l = &s->level[i];
    if (l->paired && i + 1 < s->levels) {
      float *pending[6];
      for (int p = 0; p < 6; p++) pending[p] = l->pending + (size_t)p * l->width;
      l->paired = 0;
      halve_into(s, i, pending, pending);
    }
    for (int y = l->out; y < l->height; y++) pool_row(s, l, y);
    const double inv = 1.0 / ((double)l->width * l->height);
    for (int c = 0; c < 3; c++) {
      const double *sums = l->sums[c];
      /* norm 1: SSIM, ringing, blur; norm 4: the same */
      double *out = pooled[c][i];
      out[0] = sums[0] * inv;
      out[1] = sums[2] * inv;
      out[2] = sums[4] * inv;
      out[3] = sqrt(sqrt(sums[1] * inv));
      out[4] = sqrt(sqrt(sums[3] * inv));
      out[5] = sqrt(sqrt(sums[5] * inv));
    }
    free(l->ring);
    free(l->pending);
  }
  free(s->linear);
  free(s->down);
  free(s);

  double sum = 0.0;
  int i = 0;
  for (int c = 0; c < 3; c++)
    for (int scale = 0; scale < SCALES; scale++)
      for (int norm = 0; norm < 2; norm++)
        for (int map = 0; map < 3; map++) sum += WEIGHTS[i++] * fabs(pooled[c][scale][norm * 3 + map]);
  sum *= 0.9562382616834844;
  sum = 2.326765642916932 * sum - 0.020884521182843837 * sum * sum + 6.248496625763138e-05 * sum * sum * sum;
  return sum > 0.0 ? 100.0 - 10.0 * pow(sum, 0.6276336467831387) : 100.0;
}

/**
 * A sink: SSIMULACRA 2 of the rows of `dist` against those of `ref` (the same size), read together; both closed. With
 * transparency (`alpha`), the lower of the scores over a dark and a light background, as the reference tool.
 */
double score_sink(Rows *ref, Rows *dist, int alpha) {
  if (ref->width != dist->width || ref->height != dist->height) fail("images of different sizes");
  Scorer *dark = scorer_new(ref->width, ref->height, alpha ? 0.1f : 0.5f), *light = alpha ? scorer_new(ref->width, ref->height, 0.9f) : NULL;
  for (int y = 0; y < ref->height; y++) {
    const uint8_t *a = ref->next(ref), *b = dist->next(dist);
    scorer_row(dark, a, b);
    if (light) scorer_row(light, a, b);
  }
  ref->close(ref);
  dist->close(dist);
  const double one = scorer_finish(dark), other = light ? scorer_finish(light) : one;
  return one < other ? one : other;
}

/** SSIMULACRA 2 of `dist` against `ref`, both `width` x `height` RGBA in memory (score_sink over them). */
EXPORT(sc_score) double sc_score(const uint8_t *ref, const uint8_t *dist, int width, int height, int alpha) {
  return score_sink(rows_of_buffer(ref, width, height, alpha), rows_of_buffer(dist, width, height, alpha), alpha);
}
