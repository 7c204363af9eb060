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
 * fraction of a point (scripts/auto-quality-check.mjs measures it against the reference tool).
 *
 * Memory: 19 float planes of the size scored (a 192 x 192 tile: 2.7 MiB; a 576 x 576 image: 24 MiB), freed before returning.
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

/* Halve a plane (a 2x2 mean, the last row or column repeated for odd sizes), in place. */
static void halve(float *p, int w, int h) {
  const int ow = (w + 1) / 2, oh = (h + 1) / 2;
  for (int oy = 0; oy < oh; oy++)
    for (int ox = 0; ox < ow; ox++) {
      float sum = 0.0f;
      for (int dy = 0; dy < 2; dy++)
        for (int dx = 0; dx < 2; dx++) {
          const int x = 2 * ox + dx < w ? 2 * ox + dx : w - 1, y = 2 * oy + dy < h ? 2 * oy + dy : h - 1;
          sum += p[(size_t)y * w + x];
        }
      p[(size_t)oy * ow + ox] = sum * 0.25f;
    }
}

/* Gaussian blur of `in` into `out` (zero outside the image), through `tmp`; loops shaped for SIMD. */
static void blur(const float *in, float *out, float *tmp, int w, int h) {
  for (int y = 0; y < h; y++) {
    const float *row = in + (size_t)y * w;
    float *dst = tmp + (size_t)y * w;
    memset(dst, 0, (size_t)w * sizeof *dst);
    for (int k = -RADIUS; k <= RADIUS; k++) {
      const float weight = kernel[k + RADIUS];
      const int lo = k < 0 ? -k : 0, hi = k > 0 ? w - k : w;
      for (int x = lo; x < hi; x++) dst[x] += weight * row[x + k];
    }
  }
  for (int y = 0; y < h; y++) {
    float *dst = out + (size_t)y * w;
    memset(dst, 0, (size_t)w * sizeof *dst);
    const int lo = y - RADIUS < 0 ? -y : -RADIUS, hi = y + RADIUS >= h ? h - 1 - y : RADIUS;
    for (int k = lo; k <= hi; k++) {
      const float weight = kernel[k + RADIUS];
      const float *src = tmp + (size_t)(y + k) * w;
      for (int x = 0; x < w; x++) dst[x] += weight * src[x];
    }
  }
}

static double fourth(double v) { return v * v * v * v; }

/* The six pooled errors of one channel at one scale, in WEIGHTS' order: per norm, SSIM, ringing, blur. */
static void pool(const float *a, const float *b, const float *mu1, const float *mu2, const float *s11, const float *s22, const float *s12, size_t n, double out[6]) {
  double sums[6] = {0};
  for (size_t i = 0; i < n; i++) {
    const float m1 = mu1[i], m2 = mu2[i];
    const float num_m = 1.0f - (m1 - m2) * (m1 - m2);
    const float num_s = 2.0f * (s12[i] - m1 * m2) + C2;
    const float den_s = (s11[i] - m1 * m1) + (s22[i] - m2 * m2) + C2;
    double d = 1.0 - (double)(num_m * num_s / den_s);
    if (d < 0.0) d = 0.0;
    sums[0] += d;
    sums[1] += fourth(d);
    const double edge = (1.0 + fabs((double)b[i] - m2)) / (1.0 + fabs((double)a[i] - m1)) - 1.0;
    const double ringing = edge > 0.0 ? edge : 0.0, lost = edge < 0.0 ? -edge : 0.0;
    sums[2] += ringing;
    sums[3] += fourth(ringing);
    sums[4] += lost;
    sums[5] += fourth(lost);
  }
  const double inv = 1.0 / (double)n;
  /* norm 1: SSIM, ringing, blur; norm 4: the same */
  out[0] = sums[0] * inv;
  out[1] = sums[2] * inv;
  out[2] = sums[4] * inv;
  out[3] = sqrt(sqrt(sums[1] * inv));
  out[4] = sqrt(sqrt(sums[3] * inv));
  out[5] = sqrt(sqrt(sums[5] * inv));
}

static double score_over(const uint8_t *ref, const uint8_t *dist, int width, int height, float bg) {
  if (kernel[RADIUS] == 0.0f) {
    float sum = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; k++) sum += kernel[k + RADIUS] = expf(-(float)(k * k) / (2.0f * SIGMA * SIGMA));
    for (int k = 0; k <= 2 * RADIUS; k++) kernel[k] /= sum;
  }
  const size_t n0 = (size_t)width * height;
  enum { LIN1, LIN2 = 3, XYB1 = 6, XYB2 = 9, MU1 = 12, MU2, S11, S22, S12, PRODUCT, TMP, PLANES };
  float *block = lean_alloc(n0 * PLANES * sizeof(float));
  float *plane[PLANES];
  for (int i = 0; i < PLANES; i++) plane[i] = block + n0 * i;
  to_linear(ref, n0, bg, plane[LIN1], plane[LIN1 + 1], plane[LIN1 + 2]);
  to_linear(dist, n0, bg, plane[LIN2], plane[LIN2 + 1], plane[LIN2 + 2]);

  /* pooled[channel][scale][6]; a scale is computed while the one before is 8 px or more (as the reference: the last
     may be smaller), and scales not reached weigh nothing */
  double pooled[3][SCALES][6] = {{{0}}};
  int w = width, h = height;
  for (int scale = 0; scale < SCALES && w >= 8 && h >= 8; scale++) {
    if (scale > 0) {
      for (int i = 0; i < 6; i++) halve(plane[LIN1 + i], w, h);
      w = (w + 1) / 2;
      h = (h + 1) / 2;
    }
    const size_t n = (size_t)w * h;
    to_xyb(plane[LIN1], plane[LIN1 + 1], plane[LIN1 + 2], n, plane[XYB1], plane[XYB1 + 1], plane[XYB1 + 2]);
    to_xyb(plane[LIN2], plane[LIN2 + 1], plane[LIN2 + 2], n, plane[XYB2], plane[XYB2 + 1], plane[XYB2 + 2]);
    for (int c = 0; c < 3; c++) {
      const float *a = plane[XYB1 + c], *b = plane[XYB2 + c];
      float *product = plane[PRODUCT];
      blur(a, plane[MU1], plane[TMP], w, h);
      blur(b, plane[MU2], plane[TMP], w, h);
      for (size_t i = 0; i < n; i++) product[i] = a[i] * a[i];
      blur(product, plane[S11], plane[TMP], w, h);
      for (size_t i = 0; i < n; i++) product[i] = b[i] * b[i];
      blur(product, plane[S22], plane[TMP], w, h);
      for (size_t i = 0; i < n; i++) product[i] = a[i] * b[i];
      blur(product, plane[S12], plane[TMP], w, h);
      pool(a, b, plane[MU1], plane[MU2], plane[S11], plane[S22], plane[S12], n, pooled[c][scale]);
    }
  }
  free(block);

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
 * SSIMULACRA 2 of `dist` against `ref`, both `width` x `height` RGBA. With transparency (`alpha`), the lower of the
 * scores over a dark and a light background, as the reference tool.
 */
EXPORT(sc_score) double sc_score(const uint8_t *ref, const uint8_t *dist, int width, int height, int alpha) {
  if (!alpha) return score_over(ref, dist, width, height, 0.5f);
  const double dark = score_over(ref, dist, width, height, 0.1f), light = score_over(ref, dist, width, height, 0.9f);
  return dark < light ? dark : light;
}
