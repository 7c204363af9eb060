/*
 * PNG as a row sink, in two passes over the same rows (the pipeline is built twice; JS does that).
 *
 * The first pass (png_analyse) reads what the rows hold: up to 256 distinct colours with their counts, whether
 * any alpha is below 255, whether every pixel is grey. It stops as soon as nothing more can be reduced (a
 * photo: after its first rows). The second (png_sink) writes the smallest layout those allow, losslessly: a
 * palette of 1, 2, 4 or 8 bits with tRNS, grey of 1-8 bits, grey + alpha, RGB or RGBA. Either pass holds a
 * few rows, never the image.
 *
 * Rows are filtered and deflated a chunk at a time (about CHUNK_BYTES of filtered data) by libdeflate, whose
 * blocks our patch leaves non-final and ends with an empty stored block (libdeflate-sync-flush.patch), so the
 * chunks' streams concatenate into the one zlib stream PNG wants, each chunk one IDAT, written out to JS as
 * it is made. A chunk loses only the matches it could have found in the 32 KiB before it. Where more than
 * one filter strategy is asked for, each is tried on the chunk with libdeflate's fastest level and the
 * smallest is kept, as oxipng does for the whole image.
 *
 * Why (docs/results/memory.md): oxipng, the whole-image optimiser this replaces, held the RGBA image several times
 * over (its copy, every trial filtering, every deflated candidate), so PNG output above about 3 MP did not
 * fit the budget, and each encode was a fresh instance left for V8 to collect; libpng with zlib, the row
 * writer it fell back to, made files 6-9 % larger than sharp's best at the levels its CPU cap allowed and
 * never a palette.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lean.h"
#include "libdeflate.h"
#include "palette_set.h"
#include "pipeline.h"

/* The output goes to JS as it is made (`write_output` copies it out), so the instance never holds the file. */
__attribute__((import_module("env"), import_name("write_output"))) void js_write_output(const uint8_t *bytes, size_t length);

/* Filtered bytes per chunk: large enough that the 32 KiB of history a chunk starts without costs little. */
#define CHUNK_BYTES (1u << 20)
/* Strategies (bits of png_sink's `strategies`): the five PNG filters on every row, or a choice per row. */
enum { FILTER_NONE, FILTER_SUB, FILTER_UP, FILTER_AVERAGE, FILTER_PAETH, CHOOSE_MINSUM, CHOOSE_ENTROPY, STRATEGIES };
/* libdeflate's level for the trials between strategies: its fastest. Against level 4 (before) on six held-out images,
   final levels 3, 9 and 10: another strategy on some chunks of two images, the final bytes within 0.1 %, 20-70 ms
   per MP less (native), which effort 2 spends on level 7 instead of 6 (docs/notes/benchmarks.md item 33). */
#define TRIAL_LEVEL 1

/* What png_analyse saw, for png_sink. */
static struct {
  int width, height, ready;
  PaletteSet set; /* the distinct RGBA values */
  int transparent; /* some alpha below 255 */
  int colour;      /* some pixel with R, G and B not all equal */
  uint8_t grey_levels[32]; /* which grey values occur (a bitmap), while every pixel is grey */
  int lossy_palette; /* the rows are mapped to quant.c's palette (png_analyse_palette) */
} seen;

static inline uint32_t pack(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* Whether a pixel has alpha below 255, and whether it is grey (which grey value, then) or not. */
static inline void note_alpha_and_grey(const uint8_t *p) {
  if (p[3] != 255) seen.transparent = 1;
  if (p[0] != p[1] || p[1] != p[2]) {
    seen.colour = 1;
  } else {
    seen.grey_levels[p[0] >> 3] |= (uint8_t)(1u << (p[0] & 7));
  }
}

/*
 * First pass: read rows until every question is answered (or the last row), then close them. The source's
 * own flags answer some at once: a source without alpha is opaque, a grey one is grey.
 */
void png_analyse(Rows *in) {
  memset(&seen, 0, sizeof seen);
  seen.width = in->width;
  seen.height = in->height;
  int counting = 1;
  for (int y = 0; y < in->height && (counting || (in->alpha && !seen.transparent) || !seen.colour); y++) {
    const uint8_t *row = in->next(in);
    uint32_t run = pack(row), n = 0;
    for (int x = 0; x < in->width; x++, row += 4) {
      const uint32_t rgba = pack(row);
      note_alpha_and_grey(row);
      if (!counting) continue;
      /* Runs of one colour (flat areas of a screenshot) are counted once. */
      if (rgba == run) {
        n++;
        continue;
      }
      counting = palette_count(&seen.set, run, n);
      run = rgba;
      n = 1;
    }
    if (counting) counting = palette_count(&seen.set, run, n);
  }
  in->close(in);
  seen.ready = 1;
}

/*
 * The first pass for rows that a lossy palette will map (quant.c): they hold no colour but the palette's, so what
 * png_analyse would find comes from the palette, its entries ordered by how many of the sample's pixels each took,
 * without reading the rows (a decode and a dithered mapping fewer). An entry the mapping never uses still gets its
 * PLTE slot.
 */
void png_analyse_palette(void) {
  memset(&seen, 0, sizeof seen);
  const uint8_t (*rgba)[4];
  const uint32_t *counts;
  const int size = quant_palette(&seen.width, &seen.height, &rgba, &counts);
  seen.lossy_palette = 1;
  for (int c = 0; c < size; c++) {
    note_alpha_and_grey(rgba[c]);
    palette_count(&seen.set, pack(rgba[c]), counts[c] ? counts[c] : 1);
  }
  seen.ready = 1;
}

/* ---------------------------------------------------------------- the layout */

typedef struct {
  int type;  /* PNG colour type */
  int depth; /* bits a sample */
  int channels;
  int palette_size, transparent_entries;
  uint8_t plte[768], trns[256];
} Layout;

static int grey_depth(void) {
  /* The fewest bits whose levels (multiples of 255 / (2^bits - 1)) include every grey value used. */
  static const int steps[3] = {255, 85, 17};
  for (int d = 0; d < 3; d++) {
    int ok = 1;
    for (int v = 0; v < 256 && ok; v++)
      if ((seen.grey_levels[v >> 3] >> (v & 7)) & 1) ok = v % steps[d] == 0;
    if (ok) return 1 << d;
  }
  return 8;
}

static int order_entries(const void *a, const void *b) {
  const unsigned sa = *(const unsigned *)a, sb = *(const unsigned *)b;
  const uint8_t alpha_a = seen.set.colour[sa] >> 24, alpha_b = seen.set.colour[sb] >> 24;
  /* Entries with alpha first (tRNS then stops at the last of them), then the most used first. */
  if ((alpha_a == 255) != (alpha_b == 255)) return alpha_a == 255 ? 1 : -1;
  if (seen.set.count[sa] != seen.set.count[sb]) return seen.set.count[sa] < seen.set.count[sb] ? 1 : -1;
  return seen.set.colour[sa] < seen.set.colour[sb] ? -1 : 1;
}

static Layout choose_layout(void) {
  Layout l;
  memset(&l, 0, sizeof l);
  const int palette = seen.set.colours <= 256;
  const int palette_depth = seen.set.colours <= 2 ? 1 : seen.set.colours <= 4 ? 2 : seen.set.colours <= 16 ? 4 : 8;
  if (!seen.colour && !seen.transparent && (!palette || grey_depth() <= palette_depth)) {
    l.type = 0;
    l.depth = grey_depth();
    l.channels = 1;
  } else if (palette) {
    unsigned order[256], n = 0;
    for (unsigned s = 0; s < PALETTE_SLOTS; s++)
      if (seen.set.count[s]) order[n++] = s;
    qsort(order, n, sizeof order[0], order_entries);
    for (unsigned i = 0; i < n; i++) {
      const uint32_t rgba = seen.set.colour[order[i]];
      seen.set.index[order[i]] = (uint8_t)i;
      l.plte[i * 3] = rgba & 255;
      l.plte[i * 3 + 1] = (rgba >> 8) & 255;
      l.plte[i * 3 + 2] = (rgba >> 16) & 255;
      l.trns[i] = rgba >> 24;
      if (l.trns[i] != 255) l.transparent_entries = (int)i + 1;
    }
    l.type = 3;
    l.depth = palette_depth;
    l.channels = 1;
    l.palette_size = (int)n;
  } else {
    l.channels = (seen.colour ? 3 : 1) + (seen.transparent ? 1 : 0);
    l.type = (seen.colour ? 2 : 0) | (seen.transparent ? 4 : 0);
    l.depth = 8;
  }
  return l;
}

/* One RGBA row in the layout's samples, bits packed from the most significant. */
static void pack_row(const Layout *l, const uint8_t *rgba, uint8_t *out, int width, size_t row_bytes) {
  if (l->depth < 8) {
    memset(out, 0, row_bytes);
    const int per_byte = 8 / l->depth, shift = 8 - l->depth;
    const int scale = 255 / ((1 << l->depth) - 1);
    for (int x = 0; x < width; x++, rgba += 4) {
      const unsigned v = l->type == 3 ? palette_index(&seen.set, pack(rgba)) : (unsigned)rgba[0] / scale;
      out[x / per_byte] |= (uint8_t)(v << (shift - (x % per_byte) * l->depth));
    }
  } else if (l->type == 3) {
    uint32_t last = ~pack(rgba);
    uint8_t index = 0;
    for (int x = 0; x < width; x++, rgba += 4) {
      const uint32_t rgba32 = pack(rgba);
      if (rgba32 != last) index = (uint8_t)palette_index(&seen.set, last = rgba32);
      out[x] = index;
    }
  } else if (l->channels == 4) {
    memcpy(out, rgba, (size_t)width * 4);
  } else {
    for (int x = 0; x < width; x++, rgba += 4) {
      *out++ = rgba[0];
      if (l->type & 2) {
        *out++ = rgba[1];
        *out++ = rgba[2];
      }
      if (l->type & 4) *out++ = rgba[3];
    }
  }
}

/* ---------------------------------------------------------------- filters */

static inline uint8_t paeth(int a, int b, int c) {
  const int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
  return (uint8_t)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

/* `row` filtered with `filter` against `prev` (the row above, zeros for the first) into out[0..n]. */
static void filter_row(int filter, const uint8_t *row, const uint8_t *prev, uint8_t *out, size_t n, int bpp) {
  out[0] = (uint8_t)filter;
  out++;
  size_t i = 0;
  switch (filter) {
    case FILTER_NONE: memcpy(out, row, n); break;
    case FILTER_SUB:
      for (; i < (size_t)bpp && i < n; i++) out[i] = row[i];
      for (; i < n; i++) out[i] = row[i] - row[i - bpp];
      break;
    case FILTER_UP:
      for (; i < n; i++) out[i] = row[i] - prev[i];
      break;
    case FILTER_AVERAGE:
      for (; i < (size_t)bpp && i < n; i++) out[i] = row[i] - (prev[i] >> 1);
      for (; i < n; i++) out[i] = row[i] - (uint8_t)((row[i - bpp] + prev[i]) >> 1);
      break;
    default:
      for (; i < (size_t)bpp && i < n; i++) out[i] = row[i] - prev[i];
      for (; i < n; i++) out[i] = row[i] - paeth(row[i - bpp], prev[i], prev[i - bpp]);
  }
}

/* A row's cost under the chooser: libpng's sum of absolute values (bytes as signed), or its entropy in bits. */
static float row_cost(int chooser, const uint8_t *f, size_t n) {
  if (chooser == CHOOSE_MINSUM) {
    uint32_t sum = 0;
    for (size_t i = 0; i < n; i++) sum += f[i] < 128 ? f[i] : 256 - f[i];
    return (float)sum;
  }
  uint32_t histogram[256] = {0};
  for (size_t i = 0; i < n; i++) histogram[f[i]]++;
  /* n log2 n - sum of c log2 c: the bits to code the row's bytes by their frequencies in it */
  float bits = (float)n * log2f((float)n);
  for (int v = 0; v < 256; v++)
    if (histogram[v]) bits -= (float)histogram[v] * log2f((float)histogram[v]);
  return bits;
}

/*
 * The chunk's rows (raw[1..rows], raw[0] the row above the chunk) filtered by `strategy` into `out`.
 * Returns the filtered size.
 */
static size_t filter_chunk(int strategy, uint8_t *const *raw, int rows, size_t n, int bpp, uint8_t *out, uint8_t *scratch) {
  for (int r = 1; r <= rows; r++, out += n + 1) {
    if (strategy < CHOOSE_MINSUM) {
      filter_row(strategy, raw[r], raw[r - 1], out, n, bpp);
      continue;
    }
    float best = 3.4e38f;
    for (int filter = FILTER_NONE; filter <= FILTER_PAETH; filter++) {
      uint8_t *to = filter == FILTER_NONE ? out : scratch;
      filter_row(filter, raw[r], raw[r - 1], to, n, bpp);
      const float cost = row_cost(strategy, to + 1, n);
      if (cost < best) {
        best = cost;
        if (to != out) memcpy(out, to, n + 1);
      }
    }
  }
  return (size_t)rows * (n + 1);
}

/* ---------------------------------------------------------------- the file */

static size_t written;
static uint32_t crc;

static void put(const uint8_t *bytes, size_t n) {
  js_write_output(bytes, n);
  crc = libdeflate_crc32(crc, bytes, n);
  written += n;
}

static void put32(uint32_t v) {
  const uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  put(b, 4);
}

static void chunk_start(const char *type, uint32_t length) {
  put32(length);
  crc = 0;
  put((const uint8_t *)type, 4);
}

static void chunk_end(void) {
  const uint32_t value = crc;
  const uint8_t b[4] = {(uint8_t)(value >> 24), (uint8_t)(value >> 16), (uint8_t)(value >> 8), (uint8_t)value};
  js_write_output(b, 4);
  written += 4;
}

static void chunk(const char *type, const uint8_t *data, uint32_t length) {
  chunk_start(type, length);
  if (length) put(data, length);
  chunk_end();
}

static struct libdeflate_compressor *compressor(int level) {
  struct libdeflate_compressor *c = libdeflate_alloc_compressor(level);
  if (!c) fail("out of memory");
  return c;
}

/*
 * Second pass: the rows png_analyse read, again, as the PNG of the smallest layout, deflated at libdeflate `level` (1-12), each chunk filtered by the best of `strategies`
 * (a bit mask of the enum above). Returns the size; the bytes went to JS (write_output).
 */
size_t png_sink(Rows *in, int level, int strategies) {
  if (!seen.ready || seen.width != in->width || seen.height != in->height) fail("png_sink: the rows were not analysed");
  seen.ready = 0;
  const Layout l = choose_layout();
  /* Filter trials on a lossy palette's indices never chose anything but no filter (12 encodes of four images at
     qualities 40-100: the same bytes in 15-30 % less time); a lossy palette written as grey keeps them. */
  if (seen.lossy_palette && l.type == 3) strategies = 0;
  const int width = in->width, height = in->height;
  const size_t n = ((size_t)width * l.channels * l.depth + 7) / 8;
  const int bpp = l.channels * l.depth >= 8 ? l.channels * l.depth / 8 : 1;
  const int chunk_rows = (int)(CHUNK_BYTES / (n + 1)) > 0 ? (int)(CHUNK_BYTES / (n + 1)) : 1;
  const int rows_in_chunk = chunk_rows < height ? chunk_rows : height;
  if (!strategies) strategies = 1 << (l.depth < 8 || l.type == 3 ? FILTER_NONE : CHOOSE_MINSUM);

  written = 0;
  static const uint8_t signature[8] = {137, 'P', 'N', 'G', '\r', '\n', 26, '\n'};
  js_write_output(signature, 8);
  written += 8;
  uint8_t ihdr[13] = {(uint8_t)(width >> 24), (uint8_t)(width >> 16), (uint8_t)(width >> 8), (uint8_t)width,
                      (uint8_t)(height >> 24), (uint8_t)(height >> 16), (uint8_t)(height >> 8), (uint8_t)height,
                      (uint8_t)l.depth, (uint8_t)l.type, 0, 0, 0};
  chunk("IHDR", ihdr, 13);
  if (l.type == 3) {
    chunk("PLTE", l.plte, (uint32_t)l.palette_size * 3);
    if (l.transparent_entries) chunk("tRNS", l.trns, (uint32_t)l.transparent_entries);
  }

  /* raw[0] is the row above the chunk (zeros above the first), raw[1..] the chunk's rows. */
  uint8_t **raw = lean_alloc(sizeof(uint8_t *) * (rows_in_chunk + 1));
  uint8_t *raw_block = lean_alloc(n * (rows_in_chunk + 1));
  for (int r = 0; r <= rows_in_chunk; r++) raw[r] = raw_block + n * r;
  memset(raw[0], 0, n);
  const size_t filtered_size = (n + 1) * rows_in_chunk;
  uint8_t *filtered = lean_alloc(filtered_size), *scratch = lean_alloc(n + 1);
  const int trials = __builtin_popcount((unsigned)strategies);
  uint8_t *trial = trials > 1 ? lean_alloc(filtered_size) : NULL;
  struct libdeflate_compressor *final = compressor(level);
  struct libdeflate_compressor *quick = trials > 1 && level != TRIAL_LEVEL ? compressor(TRIAL_LEVEL) : final;
  const size_t bound = libdeflate_deflate_compress_bound(final, filtered_size) + 8;
  uint8_t *deflated = lean_alloc(bound);
  uint32_t adler = 1;
  int first = 1;

  for (int y = 0; y < height;) {
    const int rows = height - y < rows_in_chunk ? height - y : rows_in_chunk;
    for (int r = 1; r <= rows; r++) pack_row(&l, in->next(in), raw[r], width, n);
    y += rows;
    int best = 0;
    if (trials > 1) {
      size_t smallest = SIZE_MAX;
      for (int s = 0; s < STRATEGIES; s++) {
        if (!((strategies >> s) & 1)) continue;
        const size_t size = filter_chunk(s, raw, rows, n, bpp, trial, scratch);
        const size_t out = libdeflate_deflate_compress(quick, trial, size, deflated, bound);
        if (out && out < smallest) {
          smallest = out;
          best = s;
        }
      }
    } else {
      best = __builtin_ctz((unsigned)strategies);
    }
    const size_t size = filter_chunk(best, raw, rows, n, bpp, filtered, scratch);
    const size_t out = libdeflate_deflate_compress(final, filtered, size, deflated, bound);
    if (!out) fail("png_sink: deflate output did not fit");
    adler = libdeflate_adler32(adler, filtered, size);
    static const uint8_t zlib_header[2] = {0x78, 0xda};
    chunk_start("IDAT", (uint32_t)(out + (first ? 2 : 0)));
    if (first) put(zlib_header, 2);
    put(deflated, out);
    chunk_end();
    first = 0;
    memcpy(raw[0], raw[rows], n);
  }
  /* The final block (empty, stored) and the stream's checksum. */
  const uint8_t end[9] = {1, 0, 0, 0xff, 0xff, (uint8_t)(adler >> 24), (uint8_t)(adler >> 16), (uint8_t)(adler >> 8), (uint8_t)adler};
  chunk("IDAT", end, 9);
  chunk("IEND", NULL, 0);

  if (quick != final) libdeflate_free_compressor(quick);
  libdeflate_free_compressor(final);
  free(deflated);
  free(trial);
  free(scratch);
  free(filtered);
  free(raw_block);
  free(raw);
  in->close(in);
  return written;
}
