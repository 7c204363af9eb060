/*
 * imgedge's lean codec, its JPEG and WebP encoding side: MozJPEG (libjpeg-turbo with trellis quantisation)
 * and libwebp in one WebAssembly
 * module (with libpng: png.c, sink_png.c; libwebp's decoder: webp_dec.c), driven row by row so that a
 * large photo never exists as a whole RGBA buffer. The row pipeline (pipeline.c) pulls rows through
 * transforms into the sinks here (jpeg_sink, webp_sink); this file also has the JPEG source (jpeg_rows)
 * and the same-size routes that keep their own loops.
 *
 * Why it exists (docs/results/memory.md): the one-shot jSquash codecs hold a decoded 12 MP photo several times
 * over (decoder memory, the RGBA copy handed to JS, the encoder's copy of it, the encoder's own
 * planes), 240-310 MiB, while a Worker isolate has 128 MB. Here:
 *   - decoding can scale by N/8 in the DCT (libjpeg's scaled IDCT), so a downscale starts small;
 *   - rows go straight into the WebP encoder's YUV 4:2:0 planes (1.5 B/px) or the JPEG compressor;
 *   - JPEG -> JPEG streams a 4:2:0 JPEG's YCbCr planes (others' RGB rows) from the decompressor into the compressor
 *     when nothing turns the image;
 *   - a turned JPEG to WebP has each pixel written where it lands in the planes, with no copy.
 *
 * One instance serves one request and is then dropped (wasm/lean.ts), so the state below is global,
 * and an error does not unwind: `fail` (a JS import) throws, and the instance is abandoned.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colour.h"
#include "jpeglib.h"
#include "lean.h"
#include "pipeline.h"
#include "src/dsp/yuv.h"
#include "src/webp/encode.h"

__attribute__((import_module("env"), import_name("fail"), noreturn)) void js_fail(const char *message, size_t length);

void fail(const char *message) { js_fail(message, strlen(message)); }

/* ---------------------------------------------------------------- errors */

static void on_jpeg_error(j_common_ptr cinfo) {
  char message[JMSG_LENGTH_MAX];
  (*cinfo->err->format_message)(cinfo, message);
  fail(message);
}

/* Warnings (premature end of data, extraneous bytes) are not fatal, as in every libjpeg program. */
static void on_jpeg_message(j_common_ptr cinfo) { (void)cinfo; }

static struct jpeg_error_mgr errors;

static struct jpeg_error_mgr *error_manager(void) {
  jpeg_std_error(&errors);
  errors.error_exit = on_jpeg_error;
  errors.output_message = on_jpeg_message;
  return &errors;
}

/* ---------------------------------------------------------------- buffers shared with JS */

EXPORT(lean_alloc) void *lean_alloc(size_t size) {
  void *p = malloc(size);
  if (!p) fail("out of memory");
  return p;
}

EXPORT(lean_free) void lean_free(void *p) { free(p); }

static uint8_t *output;
static size_t output_size;

void lean_set_output(uint8_t *bytes, size_t size) {
  output = bytes;
  output_size = size;
}

EXPORT(lean_output) uint8_t *lean_output(void) { return output; }
EXPORT(lean_output_size) size_t lean_output_size(void) { return output_size; }

/* ---------------------------------------------------------------- orientation */

/*
 * Where source pixel (sx, sy) of a w x h image lands in the upright image, for EXIF orientation
 * 1-8: x' = x0 + sx*xx + sy*xy, y' = y0 + sx*yx + sy*yy. Orientations 5-8 swap width and height.
 */
typedef struct {
  int x0, xx, xy, y0, yx, yy;
  int width, height; /* upright */
} Placement;

static Placement placement(int orientation, int w, int h) {
  Placement p;
  switch (orientation) {
    case 2: p = (Placement){w - 1, -1, 0, 0, 0, 1, w, h}; break;
    case 3: p = (Placement){w - 1, -1, 0, h - 1, 0, -1, w, h}; break;
    case 4: p = (Placement){0, 1, 0, h - 1, 0, -1, w, h}; break;
    case 5: p = (Placement){0, 0, 1, 0, 1, 0, h, w}; break;
    case 6: p = (Placement){h - 1, 0, -1, 0, 1, 0, h, w}; break;
    case 7: p = (Placement){h - 1, 0, -1, w - 1, -1, 0, h, w}; break;
    case 8: p = (Placement){0, 0, 1, w - 1, -1, 0, h, w}; break;
    default: p = (Placement){0, 1, 0, 0, 0, 1, w, h}; break;
  }
  return p;
}

/* Values outside 1-8 mean no turn, as in the sniffer. */
static int upright(int orientation) { return orientation < 2 || orientation > 8; }

static int transposes(int orientation) { return orientation >= 5 && orientation <= 8; }

/* ---------------------------------------------------------------- decoder */

/*
 * The decompressor jd_open made last, which the jd_* calls work on. A JPEG row source takes it over (its rows are read
 * from it until the source is closed), so another can be opened beside it: quality=auto's check reads a JPEG answer's
 * rows beside the JPEG input's.
 */
static struct jpeg_decompress_struct *jd;

/**
 * Read the header of `len` bytes of JPEG at `data` (which must stay alive while decoding). Returns
 * the number of colour components (1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK); width/height via jd_width/jd_height.
 */
EXPORT(jd_open) int jd_open(const uint8_t *data, size_t len) {
  jd = lean_alloc(sizeof *jd);
  memset(jd, 0, sizeof *jd);
  jd->err = error_manager();
  jpeg_create_decompress(jd);
  jpeg_mem_src(jd, data, len);
  /* APP2 markers carry the ICC profile, in pieces of up to 64 KiB that jpeg_read_icc_profile joins. */
  colour_reset();
  jpeg_save_markers(jd, JPEG_APP0 + 2, 0xFFFF);
  jpeg_read_header(jd, TRUE);
  /* A progressive JPEG's coefficients wait for its last scan in a store of compressed rows (jmem_compact.c). */
  if (jd->progressive_mode) jd->mem->max_memory_to_use = 1;
  JOCTET *profile = NULL;
  unsigned int profile_size = 0;
  if (jpeg_read_icc_profile(jd, &profile, &profile_size)) colour_set_icc(profile, profile_size);
  free(profile);
  return jd->num_components;
}

/**
 * Choose the output scale (scale_eighths/8, 1-8; libjpeg's scaled inverse DCT) and the colour
 * space, 1 = gray (gray sources only), 3 = RGB or 4 = RGBA, and start decompressing. The scaled size: jd_width/jd_height.
 */
/* Start decompressing at scale_eighths/8 into `space`; with `raw`, as the components' downsampled planes. */
static void jd_begin(int scale_eighths, J_COLOR_SPACE space, int raw) {
  jd->scale_num = (unsigned)scale_eighths;
  jd->scale_denom = 8;
  jd->out_color_space = space;
  jd->raw_data_out = raw ? TRUE : FALSE;
  jd->dct_method = JDCT_ISLOW;
  jpeg_start_decompress(jd);
}

EXPORT(jd_start) void jd_start(int scale_eighths, int channels) {
  /* CMYK and YCCK become RGBA in the row source (jpeg_rows), through their profile; no other route takes them. */
  const int cmyk = jd->num_components == 4;
  if (cmyk && channels != 4) fail("CMYK JPEG");
  jd_begin(scale_eighths, cmyk ? JCS_CMYK : channels == 4 ? JCS_EXT_RGBA : channels == 3 ? JCS_RGB : JCS_GRAYSCALE, 0);
}

EXPORT(jd_width) int jd_width(void) { return (int)(jd->output_width ? jd->output_width : jd->image_width); }
EXPORT(jd_height) int jd_height(void) { return (int)(jd->output_height ? jd->output_height : jd->image_height); }

static void jd_finish(void) {
  jpeg_finish_decompress(jd);
  jpeg_destroy_decompress(jd);
  free(jd);
  jd = NULL;
}

/**
 * Decode the whole (started) image into a new upright buffer of `channels` bytes per pixel and return
 * it; JS reads it in place. The one full-size copy of the pixels.
 */
EXPORT(jd_decode) uint8_t *jd_decode(int orientation) {
  const int w = (int)jd->output_width, h = (int)jd->output_height, c = jd->output_components;
  const Placement p = placement(orientation, w, h);
  uint8_t *pixels = lean_alloc((size_t)w * h * c);
  if (upright(orientation)) {
    while (jd->output_scanline < jd->output_height) {
      JSAMPROW row = pixels + (size_t)jd->output_scanline * w * c;
      jpeg_read_scanlines(jd, &row, 1);
    }
  } else {
    JSAMPROW row = lean_alloc((size_t)w * c);
    for (int sy = 0; sy < h; sy++) {
      jpeg_read_scanlines(jd, &row, 1);
      for (int sx = 0; sx < w; sx++) {
        const int x = p.x0 + sx * p.xx + sy * p.xy, y = p.y0 + sx * p.yx + sy * p.yy;
        memcpy(pixels + ((size_t)y * p.width + x) * c, row + (size_t)sx * c, (size_t)c);
      }
    }
    free(row);
  }
  jd_finish();
  return pixels;
}

/* ---------------------------------------------------------------- JPEG as a row source */

typedef struct {
  Rows rows;
  struct jpeg_decompress_struct *decoder;
  uint8_t *row;
  /* CMYK input: the decoded row, and its transform to sRGB (NULL without a CMYK profile). */
  uint8_t *cmyk;
  void *transform;
  int inverted;
} JpegRows;

static const uint8_t *jpeg_next(Rows *self) {
  JpegRows *j = (JpegRows *)self;
  if (j->decoder->output_scanline >= j->decoder->output_height) fail("no more JPEG rows");
  if (!j->cmyk) {
    jpeg_read_scanlines(j->decoder, &j->row, 1);
    return j->row;
  }
  jpeg_read_scanlines(j->decoder, &j->cmyk, 1);
  colour_cmyk_to_rgba(j->transform, j->cmyk, j->row, j->rows.width, j->inverted);
  return j->row;
}

/* A pipeline may stop pulling before the last row (a crop): the decompressor is destroyed, not finished. */
static void jpeg_close(Rows *self) {
  JpegRows *j = (JpegRows *)self;
  jpeg_destroy_decompress(j->decoder);
  if (jd == j->decoder) jd = NULL;
  free(j->decoder);
  colour_cmyk_free(j->transform);
  free(j->cmyk);
  free(j->row);
  free(self);
}

/* The started (RGBA) image's rows as the file stores them (rows_orient turns them), from the decompressor. */
Rows *jpeg_rows(void) {
  if (jd->out_color_space != JCS_EXT_RGBA && jd->out_color_space != JCS_CMYK) fail("the JPEG source needs RGBA rows");
  JpegRows *j = (JpegRows *)rows_stage(sizeof(JpegRows), (int)jd->output_width, (int)jd->output_height, jpeg_next, jpeg_close);
  j->decoder = jd;
  j->row = lean_alloc((size_t)jd->output_width * 4);
  j->rows.grey = jd->num_components == 1;
  if (jd->out_color_space == JCS_CMYK) {
    /* Photoshop's CMYK JPEGs, the ones with an Adobe marker, store inks inverted (0: full ink). */
    j->inverted = jd->saw_Adobe_marker;
    j->cmyk = lean_alloc((size_t)jd->output_width * 4);
    j->transform = colour_cmyk_transform(j->inverted);
  }
  return &j->rows;
}

/* ---------------------------------------------------------------- JPEG -> WebP */

static WebPPicture picture;

/*
 * Chroma of one line of 2x2 cells, summed over the up to four pixels of each cell. Rows arrive in
 * source order; a line of cells is complete when the next row belongs to the next line (x' pairs
 * when the orientation transposes, y' pairs otherwise).
 */
typedef struct {
  uint32_t *r, *g, *b;
  uint8_t *count;
  int cells, line;
} ChromaLine;

static void flush_chroma(ChromaLine *acc, int transposed) {
  if (acc->line < 0) return;
  for (int i = 0; i < acc->cells; i++) {
    const int n = acc->count[i];
    if (!n) continue;
    /* VP8RGBToU/V take sums of four pixels. */
    const int r = (int)(acc->r[i] * 4 / n), g = (int)(acc->g[i] * 4 / n), b = (int)(acc->b[i] * 4 / n);
    const int cx = transposed ? acc->line : i, cy = transposed ? i : acc->line;
    picture.u[cy * picture.uv_stride + cx] = (uint8_t)VP8RGBToU(r, g, b, YUV_HALF << 2);
    picture.v[cy * picture.uv_stride + cx] = (uint8_t)VP8RGBToV(r, g, b, YUV_HALF << 2);
  }
  memset(acc->r, 0, acc->cells * sizeof *acc->r);
  memset(acc->g, 0, acc->cells * sizeof *acc->g);
  memset(acc->b, 0, acc->cells * sizeof *acc->b);
  memset(acc->count, 0, acc->cells);
  acc->line = -1;
}

WebPPicture *lean_yuv_picture(int width, int height) {
  if (!WebPPictureInit(&picture)) fail("libwebp version mismatch");
  picture.use_argb = 0;
  picture.colorspace = WEBP_YUV420;
  picture.width = width;
  picture.height = height;
  if (!WebPPictureAlloc(&picture)) fail("out of memory");
  return &picture;
}

/**
 * Decode the (started, RGB) image that the EXIF orientation turns or flips into the encoder's YUV 4:2:0
 * planes, upright: each pixel is written where it lands, so the RGB data only ever exists a row at a
 * time. The decode step of JPEG -> WebP for a turned photo; an upright one goes through the pipeline.
 */
EXPORT(jd_to_yuv) void jd_to_yuv(int orientation) {
  if (jd->out_color_space != JCS_RGB) fail("the JPEG needs RGB rows");
  const int w = (int)jd->output_width, h = (int)jd->output_height;
  const Placement p = placement(orientation, w, h);
  const int transposed = transposes(orientation);
  lean_yuv_picture(p.width, p.height);
  if (upright(orientation)) fail("an upright JPEG goes through the row pipeline");

  ChromaLine acc;
  acc.cells = transposed ? (p.height + 1) / 2 : (p.width + 1) / 2;
  acc.r = lean_alloc(acc.cells * sizeof *acc.r);
  acc.g = lean_alloc(acc.cells * sizeof *acc.g);
  acc.b = lean_alloc(acc.cells * sizeof *acc.b);
  acc.count = lean_alloc(acc.cells);
  acc.line = 0;
  flush_chroma(&acc, transposed);

  JSAMPROW row = lean_alloc((size_t)w * 3);
  for (int sy = 0; sy < h; sy++) {
    jpeg_read_scanlines(jd, &row, 1);
    for (int sx = 0; sx < w; sx++) {
      const int x = p.x0 + sx * p.xx + sy * p.xy, y = p.y0 + sx * p.yx + sy * p.yy;
      const int line = transposed ? x >> 1 : y >> 1, cell = transposed ? y >> 1 : x >> 1;
      if (line != acc.line) {
        flush_chroma(&acc, transposed);
        acc.line = line;
      }
      const uint8_t *rgb = row + (size_t)sx * 3;
      picture.y[y * picture.y_stride + x] = (uint8_t)VP8RGBToY(rgb[0], rgb[1], rgb[2], YUV_HALF);
      acc.r[cell] += rgb[0];
      acc.g[cell] += rgb[1];
      acc.b[cell] += rgb[2];
      acc.count[cell]++;
    }
  }
  flush_chroma(&acc, transposed);
  free(row);
  free(acc.r);
  free(acc.g);
  free(acc.b);
  free(acc.count);
  jd_finish();
}

/* ---------------------------------------------------------------- WebP as a row sink */

/* An alpha plane of the sink's own (WebPPictureFree does not know it): allocated at the first transparent pixel. */
static uint8_t *alpha_plane;

static int opaque(const uint8_t *row, int width) {
  for (int x = 0; x < width; x++)
    if (row[4 * x + 3] != 255) return 0;
  return 1;
}

static void put_alpha(const uint8_t *row, int y) {
  const int w = picture.width;
  if (!alpha_plane) {
    if (opaque(row, w)) return;
    alpha_plane = lean_alloc((size_t)w * picture.height);
    memset(alpha_plane, 255, (size_t)w * y);
    picture.a = alpha_plane;
    picture.a_stride = w;
    picture.colorspace = WEBP_YUV420A;
  }
  for (int x = 0; x < w; x++) alpha_plane[(size_t)y * w + x] = row[4 * x + 3];
}

static void put_y(const uint8_t *row, int y) {
  uint8_t *out = picture.y + (size_t)y * picture.y_stride;
  for (int x = 0; x < picture.width; x++) out[x] = (uint8_t)VP8RGBToY(row[4 * x], row[4 * x + 1], row[4 * x + 2], YUV_HALF);
}

/*
 * Rows into the lossy encoder's YUV 4:2:0 planes, two at a time: U and V from the plain sums of each 2x2
 * cell (libwebp's converter). A last odd row counts twice, as does a last odd column: every cell sums four samples.
 */
static void rows_to_yuv(Rows *in) {
  const int w = in->width, h = in->height, cells = (w + 1) / 2;
  uint16_t *sums = lean_alloc((size_t)cells * 4 * sizeof *sums);
  uint8_t *first = lean_alloc((size_t)w * 4);
  WebPInitConvertARGBToYUV();
  for (int y = 0; y < h; y += 2) {
    /* The first row is copied: the second call to next() may reuse the source's row. */
    memcpy(first, in->next(in), (size_t)w * 4);
    const uint8_t *a = first, *b = y + 1 < h ? in->next(in) : first;
    put_y(a, y);
    if (in->alpha) put_alpha(a, y);
    if (b != a) {
      put_y(b, y + 1);
      if (in->alpha) put_alpha(b, y + 1);
    }
    for (int i = 0; i < w / 2; i++) {
      const uint8_t *pa = a + 8 * i, *pb = b + 8 * i;
      for (int k = 0; k < 3; k++) sums[4 * i + k] = (uint16_t)(pa[k] + pa[k + 4] + pb[k] + pb[k + 4]);
    }
    if (w & 1) {
      const uint8_t *pa = a + 4 * (w - 1), *pb = b + 4 * (w - 1);
      for (int k = 0; k < 3; k++) sums[4 * (cells - 1) + k] = (uint16_t)(2 * (pa[k] + pb[k]));
    }
    WebPConvertRGBA32ToUV(sums, picture.u + (size_t)(y / 2) * picture.uv_stride, picture.v + (size_t)(y / 2) * picture.uv_stride, cells);
  }
  free(first);
  free(sums);
}

/* Rows into the lossless encoder's ARGB picture. Returns 1 if a pixel is transparent. */
int rows_to_argb(Rows *in, WebPPicture *to) {
  int transparent = 0;
  for (int y = 0; y < in->height; y++) {
    const uint8_t *row = in->next(in);
    uint32_t *out = to->argb + (size_t)y * to->argb_stride;
    for (int x = 0; x < in->width; x++) {
      const uint8_t *p = row + 4 * x;
      out[x] = (uint32_t)p[3] << 24 | (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
      transparent |= p[3] != 255;
    }
  }
  return transparent;
}

/*
 * Pull every row of `in` into the encoder's picture: YUV 4:2:0 planes (and an alpha plane once a pixel
 * is transparent) for lossy, ARGB for lossless. webp_encode then encodes it. Returns 1 if any pixel is
 * transparent (lossy WebP's alpha plane needs memory of its own when it is encoded).
 */
int webp_sink(Rows *in, int lossless) {
  int transparent;
  alpha_plane = NULL;
  if (lossless) {
    if (!WebPPictureInit(&picture)) fail("libwebp version mismatch");
    picture.use_argb = 1;
    picture.width = in->width;
    picture.height = in->height;
    if (!WebPPictureAlloc(&picture)) fail("out of memory");
    transparent = rows_to_argb(in, &picture);
  } else {
    lean_yuv_picture(in->width, in->height);
    rows_to_yuv(in);
    transparent = alpha_plane != NULL;
  }
  in->close(in);
  return transparent;
}

static WebPMemoryWriter writer;

/**
 * Encode the picture jd_to_yuv, wd_to_yuv or webp_encode_rgba filled: quality 0-100, method 0-6. low_memory turns off
 * libwebp's token buffer (the encoder then keeps about 0.06 B/px of its own). Returns the size;
 * the bytes are at lean_output().
 */
EXPORT(webp_encode) size_t webp_encode(float quality, int method, int low_memory, int lossless) {
  WebPConfig config;
  if (!WebPConfigInit(&config)) fail("libwebp version mismatch");
  config.lossless = lossless;
  config.quality = quality;
  config.method = method;
  config.low_memory = low_memory;
  if (!WebPValidateConfig(&config)) fail("invalid WebP settings");
  WebPMemoryWriterInit(&writer);
  picture.writer = WebPMemoryWrite;
  picture.custom_ptr = &writer;
  if (!WebPEncode(&config, &picture)) fail(picture.error_code == VP8_ENC_ERROR_OUT_OF_MEMORY ? "out of memory" : "WebP encoding failed");
  WebPPictureFree(&picture);
  free(alpha_plane);
  alpha_plane = NULL;
  output = writer.mem;
  output_size = writer.size;
  return output_size;
}

/**
 * Encode `width` x `height` RGBA pixels at `rgba` (allocated with lean_alloc; freed here as soon as
 * they are in the encoder's own planes: YUV 4:2:0 plus alpha for lossy, ARGB for lossless) as WebP.
 * Lossy: quality 0-100; lossless: quality is the compression effort 0-100. Returns the size.
 */
EXPORT(webp_encode_rgba) size_t webp_encode_rgba(uint8_t *rgba, int width, int height, float quality, int method, int lossless, int low_memory) {
  if (!WebPPictureInit(&picture)) fail("libwebp version mismatch");
  picture.width = width;
  picture.height = height;
  picture.use_argb = lossless;
  if (!WebPPictureImportRGBA(&picture, rgba, width * 4)) fail("out of memory");
  free(rgba);
  return webp_encode(quality, method, low_memory, lossless);
}

/* ---------------------------------------------------------------- JPEG encoder */

static struct jpeg_compress_struct out;
static unsigned long out_size;
/* The image size (pixels) from which the compressor keeps its coefficients in the store (jpeg_store_from). */
static int64_t store_from = 2000000;

/** The JPEG encoder keeps its coefficients compressed (jmem_compact.c) for images of at least `pixels`; -1: never. */
EXPORT(jpeg_store_from) void jpeg_store_from(int pixels) { store_from = pixels < 0 ? INT64_MAX : pixels; }

/*
 * `mozjpeg`: 0 for libjpeg-turbo's behaviour (MozJPEG's JCP_FASTEST profile: standard tables, no trellis);
 * 1 for MozJPEG's own (JCP_MAX_COMPRESSION: ImageMagick's tables, trellis quantisation, progressive scans
 * chosen by trial, optimised Huffman tables, deringing), then `progressive` and `optimize` are implied;
 * 2 adds trellis quantisation that looks at the progressive scans (slower, a little smaller);
 * 3 is 1 with each row quantised by trellis as it is transformed (mozjpeg-one-pass-trellis.patch): no unquantised
 * copy of the image's coefficients, so half the memory of 1;
 * 4 is 3 with MozJPEG's fixed progressive script (jpgcrush's, 9 scans for YCbCr) instead of the scan search, which
 * encodes some 64 candidate scans to keep the smallest set: the same coefficients, 0.4-0.7x the time, 0.2-6 % more bytes.
 */
static void start_compress(int width, int height, int components, J_COLOR_SPACE space, int quality, int progressive, int optimize, int mozjpeg, int raw) {
  out.err = error_manager();
  jpeg_create_compress(&out);
  output = NULL;
  out_size = 0;
  jpeg_mem_dest(&out, &output, &out_size);
  out.image_width = (JDIMENSION)width;
  out.image_height = (JDIMENSION)height;
  out.input_components = components;
  out.in_color_space = space;
  jpeg_c_set_int_param(&out, JINT_COMPRESS_PROFILE, mozjpeg ? JCP_MAX_COMPRESSION : JCP_FASTEST);
  jpeg_set_defaults(&out);
  if (mozjpeg) {
    jpeg_c_set_bool_param(&out, JBOOLEAN_USE_SCANS_IN_TRELLIS, mozjpeg == 2 ? TRUE : FALSE);
    /* The one-pass trellis needs optimised Huffman tables (JCP_MAX_COMPRESSION sets them): without them the
     * patch's first pass would still only gather statistics, and scan 0 would never be written. */
    if (mozjpeg >= 3) jpeg_c_set_int_param(&out, JINT_TRELLIS_NUM_LOOPS, 0);
    if (mozjpeg == 4) {
      /* (jpeg_set_defaults made the search's script; this profile's simple progression is the fixed one) */
      jpeg_c_set_bool_param(&out, JBOOLEAN_OPTIMIZE_SCANS, FALSE);
      jpeg_simple_progression(&out);
    }
  } else {
    out.optimize_coding = optimize ? TRUE : FALSE;
    if (progressive) jpeg_simple_progression(&out);
  }
  jpeg_set_quality(&out, quality, TRUE);
  out.dct_method = JDCT_ISLOW;
  out.raw_data_in = raw ? TRUE : FALSE;
  /*
   * Progressive, with optimised tables or MozJPEG's, the compressor keeps every coefficient for the passes after the
   * first: in the store of compressed rows (jmem_compact.c), as a progressive JPEG's decoder does, from store_from pixels.
   */
  if ((int64_t)width * height >= store_from) out.mem->max_memory_to_use = 1;
  jpeg_start_compress(&out, TRUE);
}

static size_t finish_compress(void) {
  jpeg_finish_compress(&out);
  jpeg_destroy_compress(&out);
  output_size = out_size;
  return output_size;
}

/**
 * Encode `width` x `height` pixels of `channels` (1 gray, 3 RGB, 4 RGBA with the alpha ignored) bytes each,
 * at `pixels`, as JPEG (4:2:0; `mozjpeg` as for start_compress). Returns the size.
 */
EXPORT(jpeg_encode) size_t jpeg_encode(const uint8_t *pixels, int width, int height, int channels, int quality, int progressive, int optimize, int mozjpeg) {
  const J_COLOR_SPACE space = channels == 4 ? JCS_EXT_RGBA : channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
  start_compress(width, height, channels, space, quality, progressive, optimize, mozjpeg, 0);
  while (out.next_scanline < out.image_height) {
    JSAMPROW row = (JSAMPROW)(pixels + (size_t)out.next_scanline * width * channels);
    jpeg_write_scanlines(&out, &row, 1);
  }
  return finish_compress();
}

/* Whether the opened JPEG's components are sampled as the compressor samples YCbCr (4:2:0). */
static int sampled_420(void) {
  const jpeg_component_info *c = jd->comp_info;
  return c[0].h_samp_factor == 2 && c[0].v_samp_factor == 2 && c[1].h_samp_factor == 1 && c[1].v_samp_factor == 1 &&
         c[2].h_samp_factor == 1 && c[2].v_samp_factor == 1;
}

/*
 * The opened YCbCr 4:2:0 JPEG's planes into a 4:2:0 compressor as they are, an iMCU row (16 rows of Y, 8 of Cb and Cr)
 * at a time: no upsampling, colour conversion either way, or downsampling. Both codecs see the same block grid: the same
 * size and sampling give each component the same width and height in blocks; the compressor codes the decoder's own
 * samples of the partial blocks and makes its dummy blocks past them, as from any source.
 */
static void raw_to_jpeg(void) {
  JSAMPARRAY planes[3];
  for (int ci = 0; ci < 3; ci++) {
    const jpeg_component_info *c = &jd->comp_info[ci];
    const int rows = c->v_samp_factor * DCTSIZE, width = (int)c->width_in_blocks * DCTSIZE;
    planes[ci] = lean_alloc(rows * sizeof(JSAMPROW));
    JSAMPLE *samples = lean_alloc((size_t)rows * width);
    for (int r = 0; r < rows; r++) planes[ci][r] = samples + (size_t)r * width;
  }
  const JDIMENSION unit = (JDIMENSION)jd->max_v_samp_factor * DCTSIZE;
  while (out.next_scanline < out.image_height) {
    if (jpeg_read_raw_data(jd, planes, unit) != unit || jpeg_write_raw_data(&out, planes, unit) != unit) fail("JPEG planes");
  }
  for (int ci = 0; ci < 3; ci++) {
    free(planes[ci][0]);
    free(planes[ci]);
  }
}

/**
 * Re-encode the opened (not started) JPEG as JPEG at its size, upright. Upright, a YCbCr 4:2:0 JPEG's planes go through
 * as they are (raw_to_jpeg); another's rows go through as RGB (as grey, a grey one's): the compressor's chroma is then
 * made from RGB clamped to its range, as from any other source. A turned one is decoded whole as RGB, turned, then encoded.
 */
EXPORT(jd_to_jpeg) size_t jd_to_jpeg(int orientation, int quality, int progressive, int optimize, int mozjpeg) {
  if (upright(orientation) && jd->num_components == 3 && jd->jpeg_color_space == JCS_YCbCr && sampled_420()) {
    /* (at full scale: a scaled IDCT would give chroma other block sizes than the compressor's) */
    jd_begin(8, JCS_YCbCr, 1);
    start_compress((int)jd->output_width, (int)jd->output_height, 3, JCS_YCbCr, quality, progressive, optimize, mozjpeg, 1);
    raw_to_jpeg();
    jd_finish();
    return finish_compress();
  }
  jd_start(8, jd->num_components == 1 ? 1 : 3);
  const int w = (int)jd->output_width, h = (int)jd->output_height, c = jd->output_components;
  if (!upright(orientation)) {
    const Placement p = placement(orientation, w, h);
    uint8_t *pixels = jd_decode(orientation);
    size_t size = jpeg_encode(pixels, p.width, p.height, c, quality, progressive, optimize, mozjpeg);
    free(pixels);
    return size;
  }
  start_compress(w, h, c, c == 1 ? JCS_GRAYSCALE : JCS_RGB, quality, progressive, optimize, mozjpeg, 0);
  JSAMPROW row = lean_alloc((size_t)w * c);
  while (jd->output_scanline < jd->output_height) {
    jpeg_read_scanlines(jd, &row, 1);
    jpeg_write_scanlines(&out, &row, 1);
  }
  free(row);
  jd_finish();
  return finish_compress();
}

/**
 * Pull every row of `in` (opaque: flattened before, when it had alpha) into MozJPEG's compressor:
 * grey rows as a greyscale JPEG, others as YCbCr 4:2:0. Returns the size; the bytes are at lean_output().
 */
size_t jpeg_sink(Rows *in, int quality, int progressive, int optimize, int mozjpeg) {
  const int grey = in->grey;
  start_compress(in->width, in->height, grey ? 1 : 4, grey ? JCS_GRAYSCALE : JCS_EXT_RGBA, quality, progressive, optimize, mozjpeg, 0);
  JSAMPROW packed = grey ? lean_alloc((size_t)in->width) : NULL;
  while (out.next_scanline < out.image_height) {
    const uint8_t *row = in->next(in);
    if (grey) {
      for (int x = 0; x < in->width; x++) packed[x] = row[4 * x];
    }
    JSAMPROW rows = grey ? packed : (JSAMPROW)row;
    jpeg_write_scanlines(&out, &rows, 1);
  }
  free(packed);
  in->close(in);
  return finish_compress();
}
