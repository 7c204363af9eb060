/*
 * gravity=auto's saliency map of a small RGBA preview (src/pipeline/smartcrop.ts finds the window from it). A pixel
 * scores for its edges (Sobel's gradient of luma and, at half weight, of saturation: where a plane changes, not how
 * high it is, so a gradient sky or a tinted wall is no subject), squared so that a subject's sharp outline outweighs
 * many soft gradients, less the mean edges of its surroundings (a quarter of the preview's longer side each way: a
 * texture such as bark or foliage is as busy as what is around it); for its colour's distance from the mean colour
 * of its surroundings (a tenth of the side), cubed so that only a colour that stands out counts (a kite in a sky, a
 * ladybird on a leaf; not the slow shifts of a landscape); and for how skin-like its colour is, until skin covers a
 * fifth of the picture (a warm-lit wall, sand or a lamp's glow can, a face or hands do not). Doubles where it
 * computes, floats where it keeps a plane. Compiled code from the first call, where the same loops in JavaScript
 * ran interpreted until V8 optimised them (about 10 ms a request in workerd).
 */
#include <math.h>
#include <stdlib.h>

#include "lean.h"

#define EDGE_WEIGHT 1.0
#define SATURATION_WEIGHT 0.5
#define SKIN_WEIGHT 0.6
#define COLOUR_WEIGHT 10.0
#define SKIN_SHARE 0.2
#define SURROUND 0.25
#define COLOUR_SURROUND 0.1

/* A value's membership of [low, high], fading out over `margin` on each side (0-1). */
static double within(double value, double low, double high, double margin) {
  double below = (value - low + margin) / margin, above = (high + margin - value) / margin;
  double least = below < above ? below : above;
  return least <= 0 ? 0 : least >= 1 ? 1 : least;
}

/*
 * How skin-like a colour is (0-1): its chroma (Cb, Cr of BT.601) near the band skin falls in under common light,
 * whatever its brightness, fading out over a margin.
 */
static double skin_like(double r, double g, double b, double y) {
  if (y < 40 || y > 245) return 0;
  double cb = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b;
  double cr = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b;
  return within(cb, 80, 122, 8) * within(cr, 136, 170, 8);
}

/* The Sobel gradient's size at (x, y) of a plane (0-1); neighbours past the edge are the edge's pixels. */
static double sobel(const float *p, int up, int row, int down, int left, int x, int right) {
  double gx = (double)p[up + right] + 2 * (double)p[row + right] + p[down + right] - p[up + left] - 2 * (double)p[row + left] - p[down + left];
  double gy = (double)p[down + left] + 2 * (double)p[down + x] + p[down + right] - p[up + left] - 2 * (double)p[up + x] - p[up + right];
  double size = sqrt(gx * gx + gy * gy) / 2;
  return size < 1 ? size : 1;
}

/* A summed-area table of a plane, one row and column of zeros first. */
static void summed_area(const float *plane, int width, int height, double *table) {
  const int stride = width + 1;
  for (int x = 0; x < stride; x++) table[x] = 0;
  for (int y = 0; y < height; y++) {
    double row = 0;
    double *above = table + y * stride + 1, *at = above + stride;
    at[-1] = 0;
    for (int x = 0; x < width; x++) {
      row += plane[y * width + x];
      at[x] = above[x] + row;
    }
  }
}

/* The rows a square `radius` each way around a row covers, cut at the plane's edges, as offsets in a summed-area table. */
typedef struct { int top, bottom, rows; } Span;

static Span box_rows(int y, int radius, int width, int height) {
  int top = y > radius ? y - radius : 0;
  int bottom = y + radius + 1 < height ? y + radius + 1 : height;
  return (Span){top * (width + 1), bottom * (width + 1), bottom - top};
}

/* The mean of a table over a span's rows and the columns `radius` each way around x, as a float. */
static float box_mean(const double *t, Span s, int x, int radius, int width) {
  int left = x > radius ? x - radius : 0;
  int right = x + radius + 1 < width ? x + radius + 1 : width;
  return (float)((t[s.bottom + right] - t[s.top + right] - t[s.bottom + left] + t[s.top + left]) / (double)((right - left) * s.rows));
}

/* The map of `width` x `height` RGBA pixels at `rgba` into `map` (a float a pixel); 0, or -1 where memory ran out. */
EXPORT(saliency_map) int saliency_map(const uint8_t *rgba, int width, int height, float *map) {
  const int n = width * height;
  float *planes = malloc((size_t)n * 6 * sizeof(float));
  double *tables = malloc((size_t)(width + 1) * (height + 1) * 3 * sizeof(double));
  if (!planes || !tables) {
    free(planes);
    free(tables);
    return -1;
  }
  float *luma = planes, *saturation = planes + n, *red_green = planes + 2 * n, *yellow_blue = planes + 3 * n;
  float *skin = planes + 4 * n, *edges = planes + 5 * n;
  double skin_total = 0;
  for (int i = 0; i < n; i++) {
    const double r = rgba[4 * i], g = rgba[4 * i + 1], b = rgba[4 * i + 2];
    const double y = 0.299 * r + 0.587 * g + 0.114 * b;
    luma[i] = (float)(y / 255);
    const double max = r > g ? (r > b ? r : b) : g > b ? g : b;
    const double min = r < g ? (r < b ? r : b) : g < b ? g : b;
    /* saturation counts where there is light to carry it (near-black pixels have noisy hues) */
    saturation[i] = max > 0 ? (float)(((max - min) / max) * (max < 96 ? max / 96 : 1)) : 0;
    /* two opponent colour planes: red against green, yellow against blue */
    red_green[i] = (float)((r - g) / 255);
    yellow_blue[i] = (float)(((r + g) / 2 - b) / 255);
    const double s = skin_like(r, g, b, y);
    skin[i] = (float)s;
    skin_total += s;
  }
  double skin_weight = 1 - skin_total / n / SKIN_SHARE;
  skin_weight = SKIN_WEIGHT * (skin_weight > 0 ? skin_weight : 0);
  for (int y = 0; y < height; y++) {
    const int up = (y > 0 ? y - 1 : 0) * width, row = y * width, down = (y < height - 1 ? y + 1 : height - 1) * width;
    for (int x = 0; x < width; x++) {
      const int left = x > 0 ? x - 1 : 0, right = x < width - 1 ? x + 1 : x;
      const double edge = EDGE_WEIGHT * sobel(luma, up, row, down, left, x, right) + SATURATION_WEIGHT * sobel(saturation, up, row, down, left, x, right);
      edges[row + x] = (float)(edge * edge);
    }
  }
  const size_t table_size = (size_t)(width + 1) * (height + 1);
  double *edge_table = tables, *red_green_table = tables + table_size, *yellow_blue_table = tables + 2 * table_size;
  summed_area(edges, width, height, edge_table);
  summed_area(red_green, width, height, red_green_table);
  summed_area(yellow_blue, width, height, yellow_blue_table);
  const int longer = width > height ? width : height;
  int surround = (int)floor(longer * SURROUND + 0.5), colour_surround = (int)floor(longer * COLOUR_SURROUND + 0.5);
  if (surround < 1) surround = 1;
  if (colour_surround < 1) colour_surround = 1;
  for (int y = 0; y < height; y++) {
    const Span near = box_rows(y, 1, width, height), around = box_rows(y, surround, width, height);
    const Span colour_around = box_rows(y, colour_surround, width, height);
    for (int x = 0; x < width; x++) {
      const int i = y * width + x;
      const double d_rg = (double)red_green[i] - box_mean(red_green_table, colour_around, x, colour_surround, width);
      const double d_yb = (double)yellow_blue[i] - box_mean(yellow_blue_table, colour_around, x, colour_surround, width);
      const double distance = sqrt(d_rg * d_rg + d_yb * d_yb);
      const double edge = (double)box_mean(edge_table, near, x, 1, width) - box_mean(edge_table, around, x, surround, width);
      map[i] = (float)((rgba[4 * i + 3] / 255.0) * ((edge > 0 ? edge : 0) + skin_weight * skin[i] + COLOUR_WEIGHT * distance * distance * distance));
    }
  }
  free(planes);
  free(tables);
  return 0;
}
