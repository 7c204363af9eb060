/*
 * The row pipeline: a source (a decoder), row transforms (crop, Lanczos3, pad, flatten) and a sink (an
 * encoder), each a stage that the next one pulls RGBA rows from, one at a time and top to bottom. What a
 * conversion holds is then what its stages hold (a decoder's state, the resampler's ring, an encoder's
 * planes), not whole images between steps.
 */
#ifndef PIPELINE_H
#define PIPELINE_H

#include <stdint.h>

typedef struct Rows Rows;

struct Rows {
  int width, height;
  /* What the rows may hold: some alpha below 255; every pixel grey (R = G = B). Sinks choose their layout from these. */
  int alpha, grey;
  /* The next row, top to bottom: width x 4 bytes of RGBA, valid until the next call. */
  const uint8_t *(*next)(Rows *self);
  /* Frees what the stage and the stages it pulls from hold (called once, when the sink is done). */
  void (*close)(Rows *self);
};

/* A new stage of `size` bytes (a struct starting with Rows), zeroed. */
Rows *rows_stage(size_t size, int width, int height, const uint8_t *(*next)(Rows *), void (*close)(Rows *));

/* Sources (src_*.c and lean.c). */
Rows *rows_from_buffer(uint8_t *rgba, int width, int height, int alpha, int grey); /* takes `rgba` over */
Rows *rows_of_buffer(const uint8_t *rgba, int width, int height, int alpha);        /* leaves `rgba` to the caller */
Rows *jpeg_rows(void);                                                              /* the started JPEG (jd_start, RGBA) */
Rows *png_rows(void);                                                               /* the opened PNG */
Rows *webp_rows(int width, int height);                                             /* the opened WebP, at its size or smaller */
Rows *gif_rows(void);                                                               /* the opened GIF's first frame (gd_open) */
Rows *avif_rows(void);                                                              /* the decoded AVIF's planes (ad_open) */
Rows *frame_rows(void);                                                             /* frames.c: the animation's current frame */

/* Transforms. */
Rows *rows_orient(Rows *in, int orientation); /* EXIF 1-8: collects the image once when it turns */
Rows *rows_crop(Rows *in, int x, int y, int width, int height);
Rows *rows_resize(Rows *in, int width, int height, int premultiply); /* resample.c */
Rows *rows_pad(Rows *in, int width, int height, const uint8_t fill[4]);
Rows *rows_flatten(Rows *in, const uint8_t background[3]);
Rows *rows_remap(Rows *in); /* quant.c: to the palette quant_build made, dithered */
Rows *rows_blur(Rows *in, double sigma);                  /* op_blur.c: Gaussian */
Rows *rows_sharpen(Rows *in, double sigma, double amount); /* op_sharpen.c: unsharp mask */
Rows *rows_adjust(Rows *in, double brightness, double contrast, double gamma, double saturation); /* op_adjust.c */
Rows *rows_shrink(Rows *in, int factor);                   /* op_shrink.c: mean of factor x factor blocks */

/* Sinks: they read every row of `in`, then close it. */
uint8_t *rows_collect(Rows *in);
void border_box(Rows *in, int tolerance, int32_t box[4]); /* op_trim.c: x, y, width, height inside a uniform border */
uint8_t *mosaic_sink(Rows *in, const int32_t *columns, int nx, const int32_t *rows, int ny); /* score.c: the tiles at (start, length) spans */
double score_sink(Rows *ref, Rows *dist, int alpha);                          /* score.c: SSIMULACRA 2 of dist's rows against ref's */
void quant_sample(Rows *in);                                                  /* quant.c: the palette's sample (lossy PNG, first pass) */                                              /* whole RGBA image */
size_t jpeg_sink(Rows *in, int quality, int progressive, int optimize, int mozjpeg); /* lean.c */
int webp_sink(Rows *in, int lossless);                                       /* lean.c: fills the encoder's picture; returns 1 if transparent */
void png_analyse(Rows *in);                                                   /* sink_png.c: the first of two passes */
void png_analyse_palette(void);                                               /* sink_png.c: the same from quant.c's palette, no row read */
int quant_palette(int *width, int *height, const uint8_t (**rgba)[4], const uint32_t **counts); /* quant.c: the palette quant_build made, as written */
size_t png_sink(Rows *in, int level, int strategies);                         /* sink_png.c: the second */
void webpll_analyse(Rows *in);                                                /* sink_webpll.c: our lossless WebP, first of three passes */
void webpll_count(Rows *in, int effort);                                      /* sink_webpll.c: the second */
size_t webpll_sink(Rows *in, int effort);                                     /* sink_webpll.c: the third, the file out to JS */
void avif_sink_rows(Rows *in, int quality, int speed, int flags);          /* sink_avif.c, flags as ae_start's: the rows in, the pipeline closed; ae_finish encodes */
void anim_sink(Rows *in, int timestamp_ms);                                  /* anim_webp.c: one frame of an animated WebP */

#endif
