/*
 * The lean codec's AVIF decoder: libavif parsing the file, dav1d decoding its AV1 image (a grid's cells
 * one at a time) into YUV planes of 8, 10 or 12 bits, and RGBA rows made from the planes as they are
 * pulled, a band at a time, by libavif's own YUV -> RGB conversion on a view of the band.
 *
 * Why: jSquash's decoder (libavif + dav1d, Emscripten) returned the whole image as RGBA beside its
 * planes and its own heap, 19 MiB per MP plus 24 fixed, so no AVIF of 4 MP or more fitted the budget.
 * Here what is held is the planes (1.5 B/px for 8-bit 4:2:0, twice that above 8 bits, 3 or 6 for 4:4:4,
 * plus alpha), dav1d's per-frame state, and a band of RGBA.
 *
 * Orientation (irot/imir) is not applied here: the header maps it to an EXIF value, and the pipeline's
 * turn applies it, as for a JPEG.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "avif/avif.h"
#include "avif/internal.h"
#include "colour.h"
#include "lean.h"
#include "pipeline.h"

/* Rows converted per call; a band also converts 2 rows either side, so chroma at its edges is upsampled from its real neighbours. */
#define BAND 64
#define MARGIN 2

typedef struct {
  Rows rows;
  avifDecoder *decoder;
  uint8_t *band;   /* (BAND + 2 * MARGIN) rows of RGBA */
  int band_top;    /* the image row of the band's first row */
  int band_rows;   /* rows converted into the band */
  int y;           /* the next row handed out */
} AvifRows;

static AvifRows *current;

/*
 * libavif scales a decoded AV1 image whose size is not its item's (ispe) with libyuv, which is not built
 * in: such an image (a frame larger than its header says, or an alpha plane at another resolution, which
 * real files do not use) is refused instead.
 */
avifResult avifImageScaleWithLimit(avifImage *image, uint32_t width, uint32_t height, uint32_t size_limit, uint32_t dimension_limit, avifDiagnostics *diag) {
  (void)image, (void)width, (void)height, (void)size_limit, (void)dimension_limit;
  avifDiagnosticsPrintf(diag, "the AV1 image is not the size of its item");
  return AVIF_RESULT_NOT_IMPLEMENTED;
}

/* libavif's own message for a result that is not OK. */
static void check(avifResult result) {
  if (result != AVIF_RESULT_OK) fail(avifResultToString(result));
}

static void convert_band(AvifRows *a, int first) {
  const avifImage *image = a->decoder->image;
  const int height = (int)image->height;
  /* Views must start on a chroma row: align down to 2 (4:2:0 needs it; the others do not mind). */
  int top = first - MARGIN;
  if (top < 0) top = 0;
  top &= ~1;
  int bottom = first + BAND + MARGIN;
  if (bottom > height) bottom = height;
  avifImage *view = avifImageCreateEmpty();
  if (!view) fail("out of memory");
  const avifCropRect rect = {0, (uint32_t)top, image->width, (uint32_t)(bottom - top)};
  check(avifImageSetViewRect(view, image, &rect));
  avifRGBImage rgb;
  avifRGBImageSetDefaults(&rgb, view);
  rgb.format = AVIF_RGB_FORMAT_RGBA;
  rgb.depth = 8;
  rgb.maxThreads = 1;
  rgb.pixels = a->band;
  rgb.rowBytes = image->width * 4;
  avifResult result = avifImageYUVToRGB(view, &rgb);
  avifImageDestroy(view);
  check(result);
  a->band_top = top;
  a->band_rows = bottom - top;
}

static const uint8_t *avif_next(Rows *self) {
  AvifRows *a = (AvifRows *)self;
  const int y = a->y++;
  /* A new band when this row is not in the current one, or is in its bottom margin (and more rows follow). */
  if (a->band_rows == 0 || y < a->band_top || y >= a->band_top + a->band_rows ||
      (y >= a->band_top + a->band_rows - MARGIN && a->band_top + a->band_rows < self->height))
    convert_band(a, y);
  return a->band + (size_t)(y - a->band_top) * self->width * 4;
}

static void avif_close(Rows *self) {
  AvifRows *a = (AvifRows *)self;
  avifDecoderDestroy(a->decoder);
  free(a->band);
  free(a);
  current = NULL;
}

/*
 * Parse and decode the AVIF of `size` bytes at `data` (which must stay alive until the rows are read)
 * into its planes, refusing an image that is not `width` x `height` (the size the caller checked; dav1d
 * is told it as its frame size limit, so a larger AV1 frame is refused before it is allocated).
 */
EXPORT(ad_open) void ad_open(const uint8_t *data, size_t size, int width, int height) {
  AvifRows *a = lean_alloc(sizeof(AvifRows));
  memset(a, 0, sizeof(AvifRows));
  current = a;
  avifDecoder *d = a->decoder = avifDecoderCreate();
  if (!d) fail("out of memory");
  d->codecChoice = AVIF_CODEC_CHOICE_DAV1D;
  d->maxThreads = 1;
  d->ignoreExif = AVIF_TRUE;
  d->ignoreXMP = AVIF_TRUE;
  d->imageSizeLimit = (uint32_t)width * (uint32_t)height;
  d->imageDimensionLimit = (uint32_t)(width > height ? width : height);
  check(avifDecoderSetIOMemory(d, data, size));
  check(avifDecoderParse(d));
  if ((int)d->image->width != width || (int)d->image->height != height) fail("the AVIF's image is not the size its header gave");
  /* The colours: an ICC profile, else nclx's primaries and transfer (colour.c). */
  colour_reset();
  if (d->image->icc.size) colour_set_icc(d->image->icc.data, d->image->icc.size);
  else colour_set_cicp(d->image->colorPrimaries, d->image->transferCharacteristics);
  check(avifDecoderNextImage(d));
  const avifImage *image = d->image;
  if ((int)image->width != width || (int)image->height != height) fail("the AVIF's AV1 image is not the size its header gave");
  a->rows.width = width;
  a->rows.height = height;
  a->rows.next = avif_next;
  a->rows.close = avif_close;
  a->rows.alpha = image->alphaPlane != NULL;
  a->rows.grey = image->yuvFormat == AVIF_PIXEL_FORMAT_YUV400;
  a->band = lean_alloc((size_t)width * 4 * (BAND + 2 * MARGIN + 1));
}

/* The opened AVIF's rows (ad_open). */
Rows *avif_rows(void) {
  AvifRows *a = current;
  if (!a) fail("no AVIF is open");
  return &a->rows;
}
