/*
 * Colour management with Little CMS 2 (colour.h): a source's colours, described by an ICC profile, PNG's gAMA and
 * cHRM or AVIF's nclx, converted to sRGB a row at a time, perceptual intent (as sharp), before any resampling. A profile
 * that lcms cannot read, of a colour space the rows are not in, or that maps colours onto themselves (an sRGB
 * profile) adds no stage: the rows pass as they are.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "colour.h"
#include "lcms2.h"
#include "lean.h"

static uint8_t *icc;
static size_t icc_size;
static double file_gamma;     /* 0: none */
static double chromaticities[8]; /* white, red, green, blue xy; white x 0: none */
static int cicp_primaries, cicp_transfer;

void colour_reset(void) {
  free(icc);
  icc = NULL;
  icc_size = 0;
  file_gamma = 0;
  memset(chromaticities, 0, sizeof chromaticities);
  cicp_primaries = cicp_transfer = 0;
}

void colour_set_icc(const uint8_t *profile, size_t size) {
  free(icc);
  icc = NULL;
  icc_size = 0;
  if (!size) return;
  icc = lean_alloc(size);
  memcpy(icc, profile, size);
  icc_size = size;
}

void colour_set_gamma(double gamma) { file_gamma = gamma; }
void colour_set_chromaticities(const double xy[8]) { memcpy(chromaticities, xy, sizeof chromaticities); }
void colour_set_cicp(int primaries, int transfer) {
  cicp_primaries = primaries;
  cicp_transfer = transfer;
}

/* ---------------------------------------------------------------- profiles from numbers */

static const double SRGB_XY[8] = {0.3127, 0.3290, 0.64, 0.33, 0.30, 0.60, 0.15, 0.06};

/* ITU-T H.273 colour primaries that are not sRGB's, as white, red, green, blue xy (NULL: sRGB's or unknown). */
static const double *cicp_xy(int primaries) {
  static const double bt601_625[8] = {0.3127, 0.3290, 0.64, 0.33, 0.29, 0.60, 0.15, 0.06};
  static const double bt601_525[8] = {0.3127, 0.3290, 0.630, 0.340, 0.310, 0.595, 0.155, 0.070};
  static const double bt2020[8] = {0.3127, 0.3290, 0.708, 0.292, 0.170, 0.797, 0.131, 0.046};
  static const double dci_p3[8] = {0.314, 0.351, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060};
  static const double display_p3[8] = {0.3127, 0.3290, 0.680, 0.320, 0.265, 0.690, 0.150, 0.060};
  switch (primaries) {
    case 5: return bt601_625;
    case 6: case 7: return bt601_525;
    case 9: return bt2020;
    case 11: return dci_p3;
    case 12: return display_p3;
    default: return NULL;
  }
}

static cmsToneCurve *srgb_curve(void) {
  const double p[5] = {2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045};
  return cmsBuildParametricToneCurve(NULL, 4, p);
}

/* An H.273 transfer as a tone curve; NULL for the ones lcms cannot model as a curve of SDR (PQ, HLG) or unknown. */
static cmsToneCurve *cicp_curve(int transfer) {
  const double bt709[5] = {1 / 0.45, 1 / 1.099, 0.099 / 1.099, 1 / 4.5, 0.081};
  switch (transfer) {
    case 1: case 6: case 14: case 15: return cmsBuildParametricToneCurve(NULL, 4, bt709);
    case 2: case 13: return srgb_curve();
    case 4: return cmsBuildGamma(NULL, 2.2);
    case 5: return cmsBuildGamma(NULL, 2.8);
    case 8: return cmsBuildGamma(NULL, 1.0);
    default: return NULL;
  }
}

static cmsHPROFILE rgb_profile(const double xy[8], cmsToneCurve *curve) {
  if (!curve) return NULL;
  const cmsCIExyY white = {xy[0], xy[1], 1};
  const cmsCIExyYTRIPLE primaries = {{xy[2], xy[3], 1}, {xy[4], xy[5], 1}, {xy[6], xy[7], 1}};
  cmsToneCurve *curves[3] = {curve, curve, curve};
  cmsHPROFILE profile = cmsCreateRGBProfile(&white, &primaries, curves);
  cmsFreeToneCurve(curve);
  return profile;
}

static int near(const double *a, const double *b, int n, double tolerance) {
  for (int i = 0; i < n; i++) if (fabs(a[i] - b[i]) > tolerance) return 0;
  return 1;
}

/* The source's profile: the ICC one, else one made from gAMA/cHRM or nclx; NULL when that is sRGB or unknown. */
static cmsHPROFILE colour_profile(void) {
  if (icc) return cmsOpenProfileFromMem(icc, (cmsUInt32Number)icc_size);
  if (cicp_primaries || cicp_transfer) {
    const double *xy = cicp_xy(cicp_primaries);
    const int srgb_like_transfer = cicp_transfer == 2 || cicp_transfer == 13 || cicp_transfer == 1 || cicp_transfer == 6 ||
                                   cicp_transfer == 14 || cicp_transfer == 15 || cicp_transfer == 0;
    /* sRGB's primaries with an SDR camera or sRGB curve: shown as sRGB by browsers, left so. */
    if (!xy && srgb_like_transfer) return NULL;
    return rgb_profile(xy ? xy : SRGB_XY, cicp_curve(cicp_transfer));
  }
  const int has_chrm = chromaticities[0] > 0;
  if (!file_gamma && !has_chrm) return NULL;
  const int srgb_gamma = !file_gamma || fabs(file_gamma - 1 / 2.2) < 0.01;
  const int srgb_chrm = !has_chrm || near(chromaticities, SRGB_XY, 8, 0.01);
  if (srgb_gamma && srgb_chrm) return NULL;
  return rgb_profile(has_chrm ? chromaticities : SRGB_XY, srgb_gamma ? srgb_curve() : cmsBuildGamma(NULL, 1 / file_gamma));
}

/* ---------------------------------------------------------------- the row stage */

#define TYPE_GREY_IN_RGBA_8 (COLORSPACE_SH(PT_GRAY) | CHANNELS_SH(1) | BYTES_SH(1) | EXTRA_SH(3))

typedef struct {
  Rows rows;
  Rows *in;
  cmsHTRANSFORM transform;
  uint8_t *row;
} ColourRows;

static const uint8_t *colour_next(Rows *self) {
  ColourRows *c = (ColourRows *)self;
  const uint8_t *source = c->in->next(c->in);
  cmsDoTransform(c->transform, source, c->row, (cmsUInt32Number)c->rows.width);
  for (int x = 0; x < c->rows.width; x++) c->row[4 * x + 3] = source[4 * x + 3];
  return c->row;
}

static void colour_close(Rows *self) {
  ColourRows *c = (ColourRows *)self;
  cmsDeleteTransform(c->transform);
  free(c->row);
  c->in->close(c->in);
  free(c);
}

/* Whether the transform leaves every colour of a 6x6x6 grid (or 16 greys) within 1 of itself: an sRGB profile. */
static int identity(cmsHTRANSFORM transform, int grey) {
  uint8_t in[216 * 4], out[216 * 4];
  int n = 0;
  for (int r = 0; r < 6; r++)
    for (int g = 0; g < 6; g++)
      for (int b = 0; b < 6; b++, n++) {
        in[4 * n] = (uint8_t)(grey ? (n % 16) * 17 : r * 51);
        in[4 * n + 1] = (uint8_t)(grey ? in[4 * n] : g * 51);
        in[4 * n + 2] = (uint8_t)(grey ? in[4 * n] : b * 51);
        in[4 * n + 3] = 255;
      }
  cmsDoTransform(transform, in, out, 216);
  for (int i = 0; i < 216; i++)
    for (int k = 0; k < 3; k++)
      if (abs((int)out[4 * i + k] - (int)in[4 * i + (grey ? 0 : k)]) > 1) return 0;
  return 1;
}

Rows *rows_colour(Rows *in) {
  cmsHPROFILE source = colour_profile();
  if (!source) return in;
  const cmsColorSpaceSignature space = cmsGetColorSpace(source);
  const int grey = space == cmsSigGrayData;
  cmsHTRANSFORM transform = NULL;
  if (space == cmsSigRgbData || grey) {
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    transform = cmsCreateTransform(source, grey ? TYPE_GREY_IN_RGBA_8 : TYPE_RGBA_8, srgb, TYPE_RGBA_8, INTENT_PERCEPTUAL, cmsFLAGS_NOCACHE);
    cmsCloseProfile(srgb);
  }
  cmsCloseProfile(source);
  if (!transform) return in;
  if (identity(transform, grey)) {
    cmsDeleteTransform(transform);
    return in;
  }
  ColourRows *c = (ColourRows *)rows_stage(sizeof(ColourRows), in->width, in->height, colour_next, colour_close);
  c->in = in;
  c->transform = transform;
  c->row = lean_alloc((size_t)in->width * 4);
  c->rows.alpha = in->alpha;
  c->rows.grey = in->grey;
  return &c->rows;
}

/* ---------------------------------------------------------------- CMYK */

/* A CMYK JPEG without a (usable) CMYK profile: a generic coated-paper one (scripts/make-cmyk-profile.mjs). */
#include "cmyk_profile.h"

void *colour_cmyk_transform(int inverted) {
  cmsHPROFILE source = icc ? cmsOpenProfileFromMem(icc, (cmsUInt32Number)icc_size) : NULL;
  if (source && cmsGetColorSpace(source) != cmsSigCmykData) {
    cmsCloseProfile(source);
    source = NULL;
  }
  if (!source) source = cmsOpenProfileFromMem(CMYK_DEFAULT_PROFILE, sizeof CMYK_DEFAULT_PROFILE);
  if (!source) return NULL;
  cmsHTRANSFORM transform = NULL;
  if (cmsGetColorSpace(source) == cmsSigCmykData) {
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    transform = cmsCreateTransform(source, inverted ? TYPE_CMYK_8_REV : TYPE_CMYK_8, srgb, TYPE_RGBA_8, INTENT_PERCEPTUAL, cmsFLAGS_NOCACHE);
    cmsCloseProfile(srgb);
  }
  cmsCloseProfile(source);
  return transform;
}

/*
 * One row of CMYK to opaque RGBA: through the transform (the file's profile or the generic one), or, should Little
 * CMS refuse both, by the uncalibrated formula (each ink takes away its share of light: R = (1 - C)(1 - K)).
 */
void colour_cmyk_to_rgba(void *transform, const uint8_t *cmyk, uint8_t *rgba, int width, int inverted) {
  if (transform) {
    cmsDoTransform(transform, cmyk, rgba, (cmsUInt32Number)width);
    for (int x = 0; x < width; x++) rgba[4 * x + 3] = 255;
    return;
  }
  for (int x = 0; x < width; x++) {
    const uint8_t *p = cmyk + 4 * x;
    /* Light left by each ink, 0-255: inverted data stores it as is. */
    const int c = inverted ? p[0] : 255 - p[0], m = inverted ? p[1] : 255 - p[1], y = inverted ? p[2] : 255 - p[2], k = inverted ? p[3] : 255 - p[3];
    rgba[4 * x] = (uint8_t)((c * k + 127) / 255);
    rgba[4 * x + 1] = (uint8_t)((m * k + 127) / 255);
    rgba[4 * x + 2] = (uint8_t)((y * k + 127) / 255);
    rgba[4 * x + 3] = 255;
  }
}

void colour_cmyk_free(void *transform) {
  if (transform) cmsDeleteTransform(transform);
}
