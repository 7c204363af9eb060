/*
 * The AVIF sink: libavif and libaom (encoder only, single-threaded, all-intra), fed rows.
 *
 *   ae_start(width, height, quality, speed, flags)   the YUV planes (and an alpha plane when asked)
 *   ae_rows(rgba, count)                              a band of RGBA rows into those planes
 *   ae_finish()                                       encodes; the file is the lean output (lean_output)
 *
 * avif_sink_rows (px_avif_rows) pulls the pipeline's rows into ae_rows a band at a time and closes the pipeline; JS
 * then lets go of the input where nothing reads it again, and ae_finish encodes. ae_* are exported too, for an RGBA
 * image JS holds. What it holds is the planes (1.5 bytes per pixel for 4:2:0, 3 for 4:4:4, plus 1
 * with alpha) and, while ae_finish runs, libaom's own state, in the conversion's one lean memory beside
 * the pipeline's stages (a decoder's state, the resampler's ring), not in a memory of its own.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>

#include "avif/avif.h"
#include "aom/internal/aom_codec_internal.h"

#include "lean.h"
#include "pipeline.h"

/*
 * libaom's longjmp out of a failing encoder call (see wasm/shim/setjmp.h): `env` is the jmp_buf inside an
 * aom_internal_error_info, whose message says what failed.
 */
_Noreturn void imgedge_longjmp(int *env, int value) {
  (void)value;
  const struct aom_internal_error_info *info =
      (const struct aom_internal_error_info *)((const char *)env - offsetof(struct aom_internal_error_info, jmp));
  fail(info->has_detail && info->detail[0] ? info->detail : "libaom failed");
}

/* wasi-libc's abort() would be an unreachable trap with no message. */
void __assert_fail(const char *expr, const char *file, int line, const char *func) {
  (void)file, (void)line, (void)func;
  fail(expr);
}

enum { AE_ALPHA = 1, AE_LOSSLESS = 2, AE_SHARP_YUV = 4 };

static avifImage *image;
static avifEncoder *encoder;
static avifRWData output = AVIF_DATA_EMPTY;
static uint32_t next_row;
static int flags;
/* The grid's cell size: an image larger than one cell is encoded as a grid of cells (see ae_finish). */
static uint32_t cell_limit = 768;
static uint32_t cell_width, cell_height, grid_cols, grid_rows;

/* What the output carries besides pixels (the `metadata` option): ICC profile, EXIF, XMP; set by ae_metadata before ae_start. */
static uint8_t *metadata[3];
static size_t metadata_size[3];

static void check(avifResult result);

/** Metadata for the next AVIF: `kind` 0 the ICC profile, 1 EXIF (a TIFF block), 2 XMP; the bytes are copied. */
EXPORT(ae_metadata) void ae_metadata(int kind, const uint8_t *data, size_t size) {
  if (kind < 0 || kind > 2) fail("bad metadata kind");
  free(metadata[kind]);
  metadata[kind] = lean_alloc(size);
  memcpy(metadata[kind], data, size);
  metadata_size[kind] = size;
}

/* libavif writes what the (first) image it is given carries; an EXIF block it cannot parse is left out, not an error. */
static void attach_metadata(avifImage *target) {
  if (metadata[0]) check(avifImageSetProfileICC(target, metadata[0], metadata_size[0]));
  if (metadata[1]) (void)avifImageSetMetadataExif(target, metadata[1], metadata_size[1]);
  if (metadata[2]) check(avifImageSetMetadataXMP(target, metadata[2], metadata_size[2]));
}

static void check(avifResult result) {
  if (result == AVIF_RESULT_OK) return;
  if (result == AVIF_RESULT_OUT_OF_MEMORY) fail("out of memory");
  if (encoder && encoder->diag.error[0]) fail(encoder->diag.error);
  fail(avifResultToString(result));
}

/* Cells of at most `size` x `size` pixels (a multiple of 64, at least 64) for the next ae_start. */
/* Images of at most this many pixels are encoded whole (0: one cell's area); see ae_start. */
static uint64_t whole_limit;

/**
 * Encode images of up to `max_pixels` whole rather than as a grid: a grid's cells are predicted apart,
 * which costs bytes (+3-11 % on photos), and an odd-sized grid must be 4:4:4. Whole, libaom's memory
 * follows the frame (about 20 MiB per MP), so the caller sets this where that fits.
 */
EXPORT(ae_whole) void ae_whole(int max_pixels) { whole_limit = max_pixels > 0 ? (uint64_t)max_pixels : 0; }

EXPORT(ae_cell) void ae_cell(int size) {
  if (size < 64 || size % 64) fail("bad AVIF cell size");
  cell_limit = (uint32_t)size;
}

/* Splits `length` pixels into the fewest cells of at most cell_limit, as equal as can be, even-sized. */
static void split(uint32_t length, uint32_t *count, uint32_t *cell) {
  *count = (length + cell_limit - 1) / cell_limit;
  *cell = (length + *count - 1) / *count;
  *cell += *cell & 1;
  if (*cell < 64) *cell = 64;
  *count = (length + *cell - 1) / *cell;
}

/*
 * Starts one image: `quality` 0-100 (libavif's scale; 100 with AE_LOSSLESS), libaom `speed` 0-10,
 * `flags` AE_ALPHA (an alpha plane, encoded as its own AV1 image), AE_LOSSLESS (4:4:4, identity
 * matrix: RGB kept exactly), AE_SHARP_YUV (libsharpyuv's RGB -> 4:2:0 for lossy). Lossy output is
 * 4:2:0, BT.601 matrix, full range, sRGB, as the whole-image encoder made before.
 */
EXPORT(ae_start) void ae_start(int width, int height, int quality, int speed, int options) {
  if (image) fail("ae_start called twice");
  if (width <= 0 || height <= 0) fail("bad AVIF size");
  flags = options;
  int lossless = (flags & AE_LOSSLESS) != 0;
  split((uint32_t)width, &grid_cols, &cell_width);
  split((uint32_t)height, &grid_rows, &cell_height);
  /*
   * An image no larger in area than one cell and at most two cells long is encoded whole (1024x576 is
   * one image, not two cells; a 4096x144 strip took 7.6 MiB more than a 768x768 cell, 1152x512 as much).
   * Grid cells must be at least 64x64 (MIAF 7.3.11.4.2): an image narrower or lower than that is too.
   */
  const uint64_t area = (uint64_t)width * (uint64_t)height;
  int one_cell = area <= (uint64_t)cell_limit * cell_limit && (uint32_t)width <= 2 * cell_limit && (uint32_t)height <= 2 * cell_limit;
  if (whole_limit && area <= whole_limit && (uint32_t)width <= 4096 && (uint32_t)height <= 4096) one_cell = 1;
  if (one_cell || width < 64 || height < 64)
    grid_cols = grid_rows = 1, cell_width = (uint32_t)width, cell_height = (uint32_t)height;
  if (grid_cols * grid_rows > 1 && (grid_cols > 256 || grid_rows > 256)) fail("AVIF too large for a grid of 256 x 256 cells");
  /*
   * A grid of 4:2:0 cells must have an even width and height (MIAF 7.3.11.4.2): an odd-sized image
   * larger than one cell is encoded 4:4:4 instead of whole.
   */
  int odd = grid_cols * grid_rows > 1 && ((width | height) & 1);
  image = avifImageCreate((uint32_t)width, (uint32_t)height, 8, lossless || odd ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420);
  if (!image) fail("out of memory");
  image->yuvRange = AVIF_RANGE_FULL;
  image->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
  image->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
  image->matrixCoefficients = lossless ? AVIF_MATRIX_COEFFICIENTS_IDENTITY : AVIF_MATRIX_COEFFICIENTS_BT601;
  check(avifImageAllocatePlanes(image, (flags & AE_ALPHA) ? AVIF_PLANES_ALL : AVIF_PLANES_YUV));
  attach_metadata(image);
  encoder = avifEncoderCreate();
  if (!encoder) fail("out of memory");
  encoder->codecChoice = AVIF_CODEC_CHOICE_AOM;
  encoder->maxThreads = 1;
  encoder->speed = speed;
  encoder->quality = lossless ? AVIF_QUALITY_LOSSLESS : quality;
  encoder->qualityAlpha = lossless ? AVIF_QUALITY_LOSSLESS : quality;
  /*
   * No IntraBC (screen-content block copy): its hash tables took 2-4 times a cell's other memory on
   * photos libaom took for screen content (a 1680x1050 photo: 82 MiB with, 23 without), for the same bytes.
   */
  check(avifEncoderSetCodecSpecificOption(encoder, "enable-intrabc", "0"));
  next_row = 0;
}

/* A libaom option by its name, as aomenc's (`--key=value`), before ae_finish. */
EXPORT(ae_option) void ae_option(const char *key, const char *value) {
  if (!encoder) fail("ae_option before ae_start");
  check(avifEncoderSetCodecSpecificOption(encoder, key, value));
}

/*
 * Converts the next `count` rows of RGBA (width * 4 bytes each) into the planes. Every band but the
 * last must have an even number of rows, so 4:2:0 chroma rows are not split between bands.
 */
EXPORT(ae_rows) void ae_rows(const uint8_t *rgba, int count) {
  if (!image) fail("ae_rows before ae_start");
  if (count <= 0 || (uint32_t)count > image->height - next_row) fail("too many AVIF rows");
  if ((count & 1) && next_row + (uint32_t)count != image->height) fail("odd AVIF band");
  avifImage band;
  memset(&band, 0, sizeof band);
  avifCropRect rect = { 0, next_row, image->width, (uint32_t)count };
  check(avifImageSetViewRect(&band, image, &rect));
  avifRGBImage rgb;
  avifRGBImageSetDefaults(&rgb, &band);
  rgb.format = AVIF_RGB_FORMAT_RGBA;
  rgb.depth = 8;
  rgb.pixels = (uint8_t *)rgba;
  rgb.rowBytes = image->width * 4;
  rgb.ignoreAlpha = (flags & AE_ALPHA) ? AVIF_FALSE : AVIF_TRUE;
  rgb.chromaDownsampling = (flags & AE_SHARP_YUV) && !(flags & AE_LOSSLESS) ? AVIF_CHROMA_DOWNSAMPLING_SHARP_YUV : AVIF_CHROMA_DOWNSAMPLING_AUTOMATIC;
  check(avifImageRGBToYUV(&band, &rgb));
  next_row += (uint32_t)count;
}

/* Encodes the image; returns the file's size in bytes (the lean output). Frees the planes and the encoder. */
EXPORT(ae_finish) size_t ae_finish(void) {
  if (!image || next_row != image->height) fail("ae_finish before every row");
  uint32_t cells = grid_cols * grid_rows;
  if (cells == 1) {
    check(avifEncoderAddImage(encoder, image, 1, AVIF_ADD_IMAGE_FLAG_SINGLE));
  } else {
    /*
     * A grid: libavif encodes the cells one after another, each with an encoder of its own that it
     * destroys before the next, so libaom's memory is one cell's, not the image's. The cells are views
     * of the image's planes; libavif pads the smaller ones of the last column and row.
     */
    avifImage **views = calloc(cells, sizeof *views);
    if (!views) fail("out of memory");
    for (uint32_t i = 0; i < cells; i++) {
      uint32_t x = (i % grid_cols) * cell_width, y = (i / grid_cols) * cell_height;
      avifCropRect rect = { x, y, x + cell_width > image->width ? image->width - x : cell_width,
                            y + cell_height > image->height ? image->height - y : cell_height };
      views[i] = avifImageCreateEmpty();
      if (!views[i]) fail("out of memory");
      check(avifImageSetViewRect(views[i], image, &rect));
    }
    attach_metadata(views[0]);
    check(avifEncoderAddImageGrid(encoder, grid_cols, grid_rows, (const avifImage *const *)views, AVIF_ADD_IMAGE_FLAG_SINGLE));
    for (uint32_t i = 0; i < cells; i++) avifImageDestroy(views[i]);
    free(views);
  }
  avifImageDestroy(image);
  image = NULL;
  check(avifEncoderFinish(encoder, &output));
  avifEncoderDestroy(encoder);
  encoder = NULL;
  lean_set_output(output.data, output.size);
  return output.size;
}

/* Rows converted per ae_rows call: an even number, so 4:2:0 chroma rows are never split between bands. */
#define BAND_ROWS 64

void avif_sink_rows(Rows *in, int quality, int speed, int options) {
  ae_start(in->width, in->height, quality, speed, options);
  const size_t stride = (size_t)in->width * 4;
  const int rows = in->height < BAND_ROWS ? in->height : BAND_ROWS;
  uint8_t *band = lean_alloc(stride * rows);
  for (int y = 0; y < in->height; y += rows) {
    const int count = in->height - y < rows ? in->height - y : rows;
    for (int i = 0; i < count; i++) memcpy(band + i * stride, in->next(in), stride);
    ae_rows(band, count);
  }
  free(band);
  /* The source's and the transforms' memory goes back before libaom's state is allocated. */
  in->close(in);
}

#ifdef LEAN_TRACE
/* Debug builds only (build.sh trace): every large allocation reported to JS, which prints its call stack. */
__attribute__((import_module("env"), import_name("trace"))) void js_trace(int size, void *ptr);
void *__real_malloc(size_t size);
void __real_free(void *p);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
size_t malloc_usable_size(void *p);
void *__wrap_malloc(size_t size) {
  void *p = __real_malloc(size);
  if (size >= 65536) js_trace((int)size, p);
  return p;
}
void *__wrap_calloc(size_t n, size_t size) {
  void *p = __real_calloc(n, size);
  if (n * size >= 65536) js_trace((int)(n * size), p);
  return p;
}
void *__wrap_realloc(void *q, size_t size) {
  if (q && malloc_usable_size(q) >= 65536) js_trace(-(int)malloc_usable_size(q), q);
  void *p = __real_realloc(q, size);
  if (size >= 65536) js_trace((int)size, p);
  return p;
}
void __wrap_free(void *p) {
  if (p && malloc_usable_size(p) >= 65536) js_trace(-(int)malloc_usable_size(p), p);
  __real_free(p);
}
#endif
