/*
 * PNG as a row sink: libpng's writer, fed one row at a time, each row filtered on its own (libpng's
 * adaptive choice among the five PNG filters, or one fixed filter) and deflated by zlib as it comes, so
 * the sink holds the compressor's window and state and the output, never the image.
 *
 * Why (docs/memory.md): oxipng, the whole-image optimiser, holds the RGBA image several times over
 * (its copy, every trial filtering of it, the deflated candidates), so PNG output above about 3.4 MP did
 * not fit the memory budget. This is what every size falls back to when oxipng's plan does not fit.
 */
#include <stdlib.h>
#include <string.h>

#include "lean.h"
#include "pipeline.h"
#include "png.h"
#include "png_handlers.h"

/*
 * The output goes to JS as libpng writes it (`write_output` copies it out), so the instance never holds
 * it: a 12 MP photo's PNG is 20 MB, which the instance would otherwise keep beside JS's copy.
 */
__attribute__((import_module("env"), import_name("write_output"))) void js_write_output(const uint8_t *bytes, size_t length);

static size_t written;

static void write_out(png_structp png, png_bytep data, size_t length) {
  (void)png;
  js_write_output(data, length);
  written += length;
}

static void flush_out(png_structp png) { (void)png; }

/*
 * Pull every row of `in` into a PNG: greyscale when every row is grey, with an alpha channel when the rows
 * may have alpha, 8 bits a sample, not interlaced. `level` is zlib's (0-9); `filters` is libpng's filter
 * mask (PNG_ALL_FILTERS: the filter with the smallest sum of absolute differences, row by row).
 * Returns the size; the bytes went to JS (write_output).
 */
size_t png_sink(Rows *in, int level, int filters) {
  const int channels = (in->grey ? 1 : 3) + (in->alpha ? 1 : 0);
  const int type = (in->grey ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB) | (in->alpha ? PNG_COLOR_MASK_ALPHA : 0);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, lean_png_error, lean_png_warning);
  if (!png) fail("out of memory");
  png_infop info = png_create_info_struct(png);
  if (!info) fail("out of memory");
  written = 0;
  png_set_write_fn(png, NULL, write_out, flush_out);
  png_set_compression_level(png, level);
  png_set_compression_buffer_size(png, 64 * 1024);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, filters);
  png_set_IHDR(png, info, (png_uint_32)in->width, (png_uint_32)in->height, 8, type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE,
               PNG_FILTER_TYPE_BASE);
  png_write_info(png, info);
  uint8_t *packed = channels == 4 ? NULL : lean_alloc((size_t)in->width * channels);
  for (int y = 0; y < in->height; y++) {
    const uint8_t *row = in->next(in);
    if (packed) {
      uint8_t *q = packed;
      for (int x = 0; x < in->width; x++, row += 4) {
        *q++ = row[0];
        if (!in->grey) {
          *q++ = row[1];
          *q++ = row[2];
        }
        if (in->alpha) *q++ = row[3];
      }
      png_write_row(png, packed);
    } else {
      png_write_row(png, (png_const_bytep)row);
    }
  }
  png_write_end(png, NULL);
  png_destroy_write_struct(&png, &info);
  free(packed);
  in->close(in);
  return written;
}
