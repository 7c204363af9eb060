/*
 * Colour management (colour.c, Little CMS 2): what a source says about its colours, and the row transform that
 * turns them into sRGB. A source resets the description when it opens and fills in what its file carries; JS then
 * adds the transform (px_colour), which is left out when the description is sRGB or cannot be used.
 */
#ifndef COLOUR_H
#define COLOUR_H

#include <stddef.h>
#include <stdint.h>

#include "pipeline.h"

void colour_reset(void);
/* An embedded ICC profile (JPEG APP2, PNG iCCP, WebP ICCP, AVIF colr 'prof'/'rICC'), copied. */
void colour_set_icc(const uint8_t *icc, size_t size);
/* PNG gAMA (the file gamma, 0.45455 for sRGB-like data) and cHRM (white, red, green, blue as CIE xy), without iCCP or sRGB. */
void colour_set_gamma(double file_gamma);
void colour_set_chromaticities(const double xy[8]);
/* AVIF nclx: colour primaries and transfer characteristics as ITU-T H.273 numbers. */
void colour_set_cicp(int primaries, int transfer);

/* A transform from the source's CMYK (inverted: Adobe's convention) to RGBA, NULL when the source has no usable CMYK profile. */
void *colour_cmyk_transform(int inverted);
void colour_cmyk_to_rgba(void *transform, const uint8_t *cmyk, uint8_t *rgba, int width, int inverted);
void colour_cmyk_free(void *transform); /* NULL: nothing */

/* The transform to sRGB as a row stage, or `in` itself when there is nothing to convert. */
Rows *rows_colour(Rows *in);

#endif
