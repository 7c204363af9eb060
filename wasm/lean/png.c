/*
 * The lean codec's PNG decoder: libpng reading the file from the instance's memory, every colour type
 * and bit depth turned into 8-bit RGBA rows.
 *
 * Why (docs/results/memory.md): squoosh's PNG decoder held the file, its own decoded image and the copy it
 * handed to JS, 16 MiB per megapixel, so a 2880x1800 screenshot did not fit the budget. Here the one
 * full-size buffer is the RGBA image itself, which JS reads in place, beside the file and a few rows.
 *
 * It is a row source (pd_read_rows) so that rows can go straight into the resampler or an encoder;
 * pd_decode, the whole image, is built on it. As in lean.c the state is global (one instance serves
 * one request) and errors end in `fail`, never in a return to libpng.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colour.h"
#include "lean.h"
#include "pipeline.h"
#include "png.h"

/* iCCP, zTXt and iTXt are inflated into memory before they are dropped; larger ones are skipped. */
#define CHUNK_MAX (2 * 1024 * 1024)

static png_structp png;
static png_infop info;
static const uint8_t *file;
static size_t file_size, file_at;
static int width, height, passes, next_row, grey, alpha;
/* Adam7: the whole image, decoded on the first pd_read_rows that does not take it all at once. */
static uint8_t *deinterlaced;

/* libpng's errors end in `fail`, never in a return to libpng (wasi-libc has no longjmp); warnings (a bad ancillary
 * chunk, which is then skipped) are not fatal, as in libpng's default. */
__attribute__((noreturn)) static void lean_png_error(png_structp p, png_const_charp message) {
  (void)p;
  fail(message);
}

static void lean_png_warning(png_structp p, png_const_charp message) {
  (void)p;
  (void)message;
}

/* The file's bytes, from the instance's memory or, without it there, from JS (the request body, read in place). */
__attribute__((import_module("env"), import_name("read_input"))) void js_read_input(uint8_t *out, size_t length, size_t at);

static void read_file(png_structp p, png_bytep out, size_t length) {
  if (length > file_size - file_at) png_error(p, "the file ends early");
  if (file) {
    memcpy(out, file + file_at, length);
  } else {
    js_read_input(out, length, file_at);
  }
  file_at += length;
}

/* The colours' description for colour.c: iCCP (which libpng has checked, dropping a malformed one), else gAMA and cHRM without sRGB. */
static void read_colour(void) {
  colour_reset();
  png_charp name;
  int compression;
  png_bytep profile;
  png_uint_32 size;
  if (png_get_iCCP(png, info, &name, &compression, &profile, &size)) {
    colour_set_icc(profile, size);
    return;
  }
  if (png_get_valid(png, info, PNG_INFO_sRGB)) return;
  double gamma;
  if (png_get_gAMA(png, info, &gamma)) colour_set_gamma(gamma);
  double xy[8];
  if (png_get_cHRM(png, info, &xy[0], &xy[1], &xy[2], &xy[3], &xy[4], &xy[5], &xy[6], &xy[7])) colour_set_chromaticities(xy);
}

/**
 * Read the header of `len` bytes of PNG at `data` (which must stay alive while decoding; NULL: the bytes
 * are read from JS as libpng asks for them, so the file is never copied into the instance) and set up
 * 8-bit RGBA output. `max_width` x `max_height` is the size the caller checked: libpng refuses an IHDR
 * larger than that. Returns the number of Adam7 passes (1 or 7); the size via pd_width/pd_height.
 */
EXPORT(pd_open) int pd_open(const uint8_t *data, size_t len, int max_width, int max_height) {
  png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, lean_png_error, lean_png_warning);
  if (!png) fail("out of memory");
  info = png_create_info_struct(png);
  if (!info) fail("out of memory");
  file = data;
  file_size = len;
  file_at = 0;
  png_set_read_fn(png, NULL, read_file);
  png_set_user_limits(png, (png_uint_32)max_width, (png_uint_32)max_height);
  png_set_chunk_malloc_max(png, CHUNK_MAX);
  /* As the decoder before it did (test/conformance/expected.json, badadler.png): the chunk CRCs
   * are checked, the zlib stream's own checksum is not. */
  png_set_option(png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
  png_read_info(png, info);
  read_colour();
  const int type = png_get_color_type(png, info);
  grey = !(type & PNG_COLOR_MASK_COLOR);
  alpha = (type & PNG_COLOR_MASK_ALPHA) || png_get_valid(png, info, PNG_INFO_tRNS);

  png_set_expand(png); /* palette -> RGB, grey below 8 bits -> 8, tRNS -> alpha */
  png_set_strip_16(png);
  png_set_gray_to_rgb(png);
  png_set_filler(png, 0xff, PNG_FILLER_AFTER);
  passes = png_set_interlace_handling(png);
  png_read_update_info(png, info);
  width = (int)png_get_image_width(png, info);
  height = (int)png_get_image_height(png, info);
  if ((uint64_t)width * height * 4 > SIZE_MAX) fail("out of memory"); /* wasm32: 4 GiB */
  if (png_get_rowbytes(png, info) != (size_t)width * 4) fail("unexpected PNG row layout");
  /* From here on, ancillary chunks are behind us: what libpng calls benign in the image data itself
   * (more compressed data than the IHDR's rows need) is an error. */
  png_set_benign_errors(png, 0);
  next_row = 0;
  deinterlaced = NULL;
  return passes;
}

EXPORT(pd_width) int pd_width(void) { return width; }
EXPORT(pd_height) int pd_height(void) { return height; }

static void read_passes(uint8_t *image) {
  for (int pass = 0; pass < passes; pass++)
    for (int y = 0; y < height; y++) png_read_row(png, image + (size_t)y * width * 4, NULL);
}

/**
 * The next `count` rows of RGBA (count x width x 4 bytes) into `rows`. Rows come straight from the
 * inflater, except for Adam7, whose rows are complete only after the last pass: then the image is
 * decoded once, into `rows` if it asks for all of it, or else into a buffer of its own that rows are
 * copied from.
 */
EXPORT(pd_read_rows) void pd_read_rows(uint8_t *rows, int count) {
  if (count > height - next_row) fail("no more PNG rows");
  const size_t stride = (size_t)width * 4;
  if (passes == 1) {
    for (int i = 0; i < count; i++) png_read_row(png, rows + i * stride, NULL);
  } else if (next_row == 0 && count == height) {
    read_passes(rows);
  } else {
    if (!deinterlaced) {
      deinterlaced = lean_alloc(stride * height);
      read_passes(deinterlaced);
    }
    memcpy(rows, deinterlaced + next_row * stride, count * stride);
  }
  next_row += count;
}

/* Ends reading at the last row (chunks after the image data are not read: the output drops them). */
EXPORT(pd_close) void pd_close(void) {
  png_destroy_read_struct(&png, &info, NULL);
  free(deinterlaced);
  deinterlaced = NULL;
}

/** Decode the whole (opened) image into a new RGBA buffer and return it; JS reads it in place. */
EXPORT(pd_decode) uint8_t *pd_decode(void) {
  uint8_t *pixels = lean_alloc((size_t)width * height * 4);
  pd_read_rows(pixels, height);
  pd_close();
  return pixels;
}

/* ---------------------------------------------------------------- as a row source */

typedef struct {
  Rows rows;
  uint8_t *row;
} PngRows;

static const uint8_t *png_next(Rows *self) {
  uint8_t *row = ((PngRows *)self)->row;
  pd_read_rows(row, 1);
  return row;
}

static void png_close(Rows *self) {
  pd_close();
  free(((PngRows *)self)->row);
  free(self);
}

/* The opened PNG's rows, as they come out of the inflater (Adam7: out of the image decoded once, see pd_read_rows). */
Rows *png_rows(void) {
  PngRows *p = (PngRows *)rows_stage(sizeof(PngRows), width, height, png_next, png_close);
  p->row = lean_alloc((size_t)width * 4);
  p->rows.grey = grey;
  p->rows.alpha = alpha;
  return &p->rows;
}
