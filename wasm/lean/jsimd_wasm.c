/*
 * WebAssembly SIMD128 kernels for MozJPEG's SIMD seam (jsimd.h, jsimddct.h): the colour conversions, YCbCr -> RGB when
 * decoding (in 16-bit lanes) and RGB -> YCbCr when encoding, 16 pixels at a time; the accurate integer IDCT
 * (jidctint.c's jpeg_idct_islow), eight columns or rows of a block at a time in 16-bit lanes (four in 32-bit ones for a
 * block whose values do not fit 16 bits), a block without AC coefficients as one value; the reduced IDCTs for decoding
 * at 1/2 and 1/4 scale (jidctred.c's jpeg_idct_4x4 and jpeg_idct_2x2), in 32-bit lanes; quantisation (jcdctmgr.c's
 * quantize), four coefficients at a time; the forward DCT (jfdctint.c's jpeg_fdct_islow) and the sample conversion
 * before it, four rows or columns at a time; 2:1 downsampling of 4:2:0 chroma (jcsample.c's h2v2_downsample) and fancy
 * upsampling of 4:2:0 and 4:2:2 chroma (jdsample.c's h2v2_ and h2v1_fancy_upsample), eight columns at a time. Every
 * other jsimd_* entry stays jsimd_none.c's (build.sh compiles it with these names moved aside), so MozJPEG runs its C
 * code there; Huffman coding is C too, patched to visit only the coefficients that are not zero
 * (mozjpeg-huffman-nonzero.patch).
 *
 * Why: a 12 MP JPEG decoded to RGBA spent 32 % of its time in the C colour conversion (table lookups per pixel) and
 * 22 % in the IDCT, and a libjpeg-turbo-profile encode 22 % in quantisation and 10 % in RGB -> YCbCr
 * (docs/notes/benchmarks.md items 30, 32 and 33). The arithmetic here is the C code's own, term for term: the same fixed-point
 * constants, rounding terms and arithmetic shifts (or, where 16-bit lanes cannot hold a term, an identity checked over
 * every input it can get); for the colour conversions, saturation to 0-255 where the C code indexes its range-limit
 * table (whose inputs there stay within -256..511, where that table clamps). So the output is the C build's byte for
 * byte (scripts/lib/lean-compare.mjs verify; test/integration/jpeg-simd.test.ts against the C build's digests, and
 * jpeg-routes.test.ts against jSquash's C-only decoder).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <wasm_simd128.h>

#define JPEG_INTERNALS
#include "jinclude.h"
#include "jpeglib.h"
#include "jdct.h"

#define SCALEBITS 16
#define ONE_HALF ((int32_t)1 << (SCALEBITS - 1))
#define FIX(x) ((int32_t)((x) * (1L << SCALEBITS) + 0.5))
#define CBCR_OFFSET ((int32_t)CENTERJSAMPLE << SCALEBITS)

/* YCbCr -> RGB (jdcolor.c's tables as products). */
#define CR_R FIX(1.40200)
#define CB_B FIX(1.77200)
#define CR_G (-FIX(0.71414))
#define CB_G (-FIX(0.34414))
/* RGB -> YCbCr (jccolor.c's tables as products). */
#define R_Y FIX(0.29900)
#define G_Y FIX(0.58700)
#define B_Y FIX(0.11400)
#define R_CB (-FIX(0.16874))
#define G_CB (-FIX(0.33126))
#define B_CB FIX(0.50000)
#define R_CR FIX(0.50000)
#define G_CR (-FIX(0.41869))
#define B_CR (-FIX(0.08131))

static inline int clamp255(int v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

/* One pixel, as jdcolext.c's ycc_rgb_convert_internal computes it. */
static inline void ycc_rgb_pixel(int y, int cb, int cr, JSAMPLE *out, int r, int g, int b) {
  cb -= CENTERJSAMPLE;
  cr -= CENTERJSAMPLE;
  out[r] = (JSAMPLE)clamp255(y + ((CR_R * cr + ONE_HALF) >> SCALEBITS));
  out[g] = (JSAMPLE)clamp255(y + ((CB_G * cb + ONE_HALF + CR_G * cr) >> SCALEBITS));
  out[b] = (JSAMPLE)clamp255(y + ((CB_B * cb + ONE_HALF) >> SCALEBITS));
}

/* (c1 x1 + c2 x2 + c3 x3 + k) >> 16 on 8 unsigned 16-bit samples of each (results 0-255). */
static inline v128_t term3(v128_t x1, int32_t c1, v128_t x2, int32_t c2, v128_t x3, int32_t c3, int32_t k) {
  const v128_t v1 = wasm_i32x4_splat(c1), v2 = wasm_i32x4_splat(c2), v3 = wasm_i32x4_splat(c3), vk = wasm_i32x4_splat(k);
#define SUM(extend)                                                                                                     \
  wasm_i32x4_add(wasm_i32x4_add(wasm_i32x4_mul(extend(x1), v1), wasm_i32x4_mul(extend(x2), v2)),                       \
                 wasm_i32x4_add(wasm_i32x4_mul(extend(x3), v3), vk))
  const v128_t a = SUM(wasm_u32x4_extend_low_u16x8), b = SUM(wasm_u32x4_extend_high_u16x8);
#undef SUM
  return wasm_i16x8_narrow_i32x4(wasm_i32x4_shr(a, SCALEBITS), wasm_i32x4_shr(b, SCALEBITS));
}

/* 16 pixels' R, G, B (and opaque alpha) interleaved into 48 (RGB) or 64 (RGBA, RGBX) bytes. */
static inline void store_rgb(JSAMPLE *out, v128_t r, v128_t g, v128_t b, int pixelsize) {
  if (pixelsize == 4) {
    const v128_t a = wasm_i8x16_splat((int8_t)0xFF);
    const v128_t rg_lo = wasm_i8x16_shuffle(r, g, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v128_t rg_hi = wasm_i8x16_shuffle(r, g, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    const v128_t ba_lo = wasm_i8x16_shuffle(b, a, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const v128_t ba_hi = wasm_i8x16_shuffle(b, a, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    wasm_v128_store(out, wasm_i16x8_shuffle(rg_lo, ba_lo, 0, 8, 1, 9, 2, 10, 3, 11));
    wasm_v128_store(out + 16, wasm_i16x8_shuffle(rg_lo, ba_lo, 4, 12, 5, 13, 6, 14, 7, 15));
    wasm_v128_store(out + 32, wasm_i16x8_shuffle(rg_hi, ba_hi, 0, 8, 1, 9, 2, 10, 3, 11));
    wasm_v128_store(out + 48, wasm_i16x8_shuffle(rg_hi, ba_hi, 4, 12, 5, 13, 6, 14, 7, 15));
    return;
  }
  /* r0 g0 b0 r1 g1 b1 ...: R and G placed first (B's slots hold anything), then B put in its slots. */
  const v128_t t0 = wasm_i8x16_shuffle(r, g, 0, 16, 0, 1, 17, 0, 2, 18, 0, 3, 19, 0, 4, 20, 0, 5);
  const v128_t t1 = wasm_i8x16_shuffle(r, g, 21, 0, 6, 22, 0, 7, 23, 0, 8, 24, 0, 9, 25, 0, 10, 26);
  const v128_t t2 = wasm_i8x16_shuffle(r, g, 0, 11, 27, 0, 12, 28, 0, 13, 29, 0, 14, 30, 0, 15, 31, 0);
  wasm_v128_store(out, wasm_i8x16_shuffle(t0, b, 0, 1, 16, 3, 4, 17, 6, 7, 18, 9, 10, 19, 12, 13, 20, 15));
  wasm_v128_store(out + 16, wasm_i8x16_shuffle(t1, b, 0, 21, 2, 3, 22, 5, 6, 23, 8, 9, 24, 11, 12, 25, 14, 15));
  wasm_v128_store(out + 32, wasm_i8x16_shuffle(t2, b, 26, 1, 2, 27, 4, 5, 28, 7, 8, 29, 10, 11, 30, 13, 14, 31));
}

/*
 * YCbCr -> RGB in 16-bit lanes, eight pixels an instruction. The C code's terms, (c x + 2^15) >> 16 for centred x in
 * -128..127, split into whole multiples of x and a fraction that fits 16 bits: for R and B the fraction as a rounded
 * Q15 product (x + round(x 13173 / 2^15) and 2x + round(x -7471 / 2^15) equal the C terms for every x: checked over
 * all 256 values when these constants were chosen), for G the sum of two products before its one rounding, so a
 * pairwise 16 x 16 -> 32-bit dot product: (-22554 cb + 18734 cr + 2^15) >> 16, then - cr, since the C code's
 * -46802 cr is (18734 - 65536) cr and 65536 cr shifts out whole.
 */
#define Q15_CR_R 13173
#define Q15_CB_B (-7471)
static inline v128_t green(v128_t xb, v128_t xr) {
  const v128_t k = wasm_i16x8_make(-22554, 18734, -22554, 18734, -22554, 18734, -22554, 18734);
  const v128_t half = wasm_i32x4_splat(ONE_HALF);
  const v128_t lo = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(xb, xr, 0, 8, 1, 9, 2, 10, 3, 11), k), half);
  const v128_t hi = wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_shuffle(xb, xr, 4, 12, 5, 13, 6, 14, 7, 15), k), half);
  return wasm_i16x8_narrow_i32x4(wasm_i32x4_shr(lo, SCALEBITS), wasm_i32x4_shr(hi, SCALEBITS));
}

GLOBAL(int) jsimd_can_ycc_rgb(void) { return 1; }

GLOBAL(void) jsimd_ycc_rgb_convert(j_decompress_ptr cinfo, JSAMPIMAGE input_buf, JDIMENSION input_row, JSAMPARRAY output_buf,
                                   int num_rows) {
  const J_COLOR_SPACE space = cinfo->out_color_space;
  const int r = rgb_red[space], g = rgb_green[space], b = rgb_blue[space], size = rgb_pixelsize[space];
  /* RGB, RGBX and RGBA in 16-pixel steps; the other layouts (and each row's last pixels) one pixel at a time. */
  const int vector = r == 0 && g == 1 && b == 2;
  const JDIMENSION width = cinfo->output_width;
  const v128_t centre = wasm_i16x8_splat(CENTERJSAMPLE);
  const v128_t cr_r = wasm_i16x8_splat(Q15_CR_R), cb_b = wasm_i16x8_splat(Q15_CB_B);
  while (--num_rows >= 0) {
    const JSAMPLE *y = input_buf[0][input_row], *cb = input_buf[1][input_row], *cr = input_buf[2][input_row];
    input_row++;
    JSAMPLE *out = *output_buf++;
    JDIMENSION col = 0;
    if (vector) {
      for (; col + 16 <= width; col += 16, out += 16 * size) {
        const v128_t vy = wasm_v128_load(y + col), vcb = wasm_v128_load(cb + col), vcr = wasm_v128_load(cr + col);
        v128_t rgb[3][2];
        for (int half = 0; half < 2; half++) {
          const v128_t yy = half ? wasm_u16x8_extend_high_u8x16(vy) : wasm_u16x8_extend_low_u8x16(vy);
          const v128_t xb = wasm_i16x8_sub(half ? wasm_u16x8_extend_high_u8x16(vcb) : wasm_u16x8_extend_low_u8x16(vcb), centre);
          const v128_t xr = wasm_i16x8_sub(half ? wasm_u16x8_extend_high_u8x16(vcr) : wasm_u16x8_extend_low_u8x16(vcr), centre);
          rgb[0][half] = wasm_i16x8_add(wasm_i16x8_add(yy, xr), wasm_i16x8_q15mulr_sat(xr, cr_r));
          rgb[1][half] = wasm_i16x8_sub(wasm_i16x8_add(yy, green(xb, xr)), xr);
          rgb[2][half] = wasm_i16x8_add(wasm_i16x8_add(yy, wasm_i16x8_add(xb, xb)), wasm_i16x8_q15mulr_sat(xb, cb_b));
        }
        store_rgb(out, wasm_u8x16_narrow_i16x8(rgb[0][0], rgb[0][1]), wasm_u8x16_narrow_i16x8(rgb[1][0], rgb[1][1]),
                  wasm_u8x16_narrow_i16x8(rgb[2][0], rgb[2][1]), size);
      }
    }
    for (; col < width; col++, out += size) {
      ycc_rgb_pixel(y[col], cb[col], cr[col], out, r, g, b);
      if (size == 4) out[6 - r - g - b] = MAXJSAMPLE;
    }
  }
}

GLOBAL(int) jsimd_can_rgb_ycc(void) { return 1; }

GLOBAL(void) jsimd_rgb_ycc_convert(j_compress_ptr cinfo, JSAMPARRAY input_buf, JSAMPIMAGE output_buf, JDIMENSION output_row,
                                   int num_rows) {
  const J_COLOR_SPACE space = cinfo->in_color_space;
  const int r = rgb_red[space], g = rgb_green[space], b = rgb_blue[space], size = rgb_pixelsize[space];
  const int vector = r == 0 && g == 1 && b == 2;
  const JDIMENSION width = cinfo->image_width;
  while (--num_rows >= 0) {
    const JSAMPLE *in = *input_buf++;
    JSAMPLE *y = output_buf[0][output_row], *cb = output_buf[1][output_row], *cr = output_buf[2][output_row];
    output_row++;
    JDIMENSION col = 0;
    if (vector) {
      for (; col + 16 <= width; col += 16, in += 16 * size) {
        /* Deinterleave 16 pixels: R, G and B each as 16 bytes. */
        v128_t vr, vg, vb;
        if (size == 4) {
          const v128_t p0 = wasm_v128_load(in), p1 = wasm_v128_load(in + 16), p2 = wasm_v128_load(in + 32), p3 = wasm_v128_load(in + 48);
          const v128_t lo = wasm_i8x16_shuffle(p0, p1, 0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
          const v128_t hi = wasm_i8x16_shuffle(p2, p3, 0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29);
          const v128_t blo = wasm_i8x16_shuffle(p0, p1, 2, 6, 10, 14, 18, 22, 26, 30, 0, 0, 0, 0, 0, 0, 0, 0);
          const v128_t bhi = wasm_i8x16_shuffle(p2, p3, 2, 6, 10, 14, 18, 22, 26, 30, 0, 0, 0, 0, 0, 0, 0, 0);
          vr = wasm_i64x2_shuffle(lo, hi, 0, 2);
          vg = wasm_i64x2_shuffle(lo, hi, 1, 3);
          vb = wasm_i64x2_shuffle(blo, bhi, 0, 2);
        } else {
          const v128_t p0 = wasm_v128_load(in), p1 = wasm_v128_load(in + 16), p2 = wasm_v128_load(in + 32);
          /* Bytes 0-15 from p0 and p1, 16-31 from p1 and p2 (index 16+ is the second vector). */
          vr = wasm_i8x16_shuffle(wasm_i8x16_shuffle(p0, p1, 0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 0, 0, 0, 0, 0), p2,
                                  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 20, 23, 26, 29);
          vg = wasm_i8x16_shuffle(wasm_i8x16_shuffle(p0, p1, 1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 0, 0, 0, 0, 0), p2,
                                  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 18, 21, 24, 27, 30);
          vb = wasm_i8x16_shuffle(wasm_i8x16_shuffle(p0, p1, 2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 0, 0, 0, 0, 0, 0), p2,
                                  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 19, 22, 25, 28, 31);
        }
        v128_t out[3][2];
        for (int half = 0; half < 2; half++) {
          const v128_t xr = half ? wasm_u16x8_extend_high_u8x16(vr) : wasm_u16x8_extend_low_u8x16(vr);
          const v128_t xg = half ? wasm_u16x8_extend_high_u8x16(vg) : wasm_u16x8_extend_low_u8x16(vg);
          const v128_t xb = half ? wasm_u16x8_extend_high_u8x16(vb) : wasm_u16x8_extend_low_u8x16(vb);
          out[0][half] = term3(xr, R_Y, xg, G_Y, xb, B_Y, ONE_HALF);
          out[1][half] = term3(xr, R_CB, xg, G_CB, xb, B_CB, CBCR_OFFSET + ONE_HALF - 1);
          out[2][half] = term3(xr, R_CR, xg, G_CR, xb, B_CR, CBCR_OFFSET + ONE_HALF - 1);
        }
        wasm_v128_store(y + col, wasm_u8x16_narrow_i16x8(out[0][0], out[0][1]));
        wasm_v128_store(cb + col, wasm_u8x16_narrow_i16x8(out[1][0], out[1][1]));
        wasm_v128_store(cr + col, wasm_u8x16_narrow_i16x8(out[2][0], out[2][1]));
      }
    }
    for (; col < width; col++, in += size) {
      const int32_t pr = in[r], pg = in[g], pb = in[b];
      y[col] = (JSAMPLE)((R_Y * pr + G_Y * pg + B_Y * pb + ONE_HALF) >> SCALEBITS);
      cb[col] = (JSAMPLE)((R_CB * pr + G_CB * pg + B_CB * pb + CBCR_OFFSET + ONE_HALF - 1) >> SCALEBITS);
      cr[col] = (JSAMPLE)((R_CR * pr + G_CR * pg + B_CR * pb + CBCR_OFFSET + ONE_HALF - 1) >> SCALEBITS);
    }
  }
}

/*
 * The accurate integer IDCT, jidctint.c's jpeg_idct_islow computed in four 32-bit lanes: its constants (13 fraction
 * bits), its two passes (columns into a workspace scaled by 4, then rows), its descaling with rounding, its shortcut for
 * a column or row whose AC terms are all zero (taken lane by lane: with huge coefficients the shortcut and the full
 * computation differ, as they wrap differently), and its range-limit table as arithmetic: the table maps
 * (x & 1023) to x + 128 clamped when x is within -384..383 and wraps beyond, which is w = (x + 128) & 1023 read as
 * w below 256, 255 below 640, else 0.
 */
#define CONST_BITS 13
#define PASS1_BITS 2

static inline v128_t mulc(v128_t x, int32_t c) { return wasm_i32x4_mul(x, wasm_i32x4_splat(c)); }

/* The C code's DESCALE: x / 2^n rounded, as (x + 2^(n - 1)) >> n. */
static inline v128_t descale(v128_t x, int n) { return wasm_i32x4_shr(wasm_i32x4_add(x, wasm_i32x4_splat(1 << (n - 1))), n); }

/*
 * The odd part both islow DCTs share (jidctint.c's and jfdctint.c's): for a, b, c, d (the IDCT's inputs 7, 5, 3, 1;
 * the FDCT's tmp4-tmp7), out[0..3] are 2446 a, 16819 b, 25172 c and 12299 d each plus two of z1-z4, before descaling.
 * The C code adds in another order, which in 32-bit wrapping arithmetic is the same sum.
 */
static inline void odd_part(v128_t a, v128_t b, v128_t c, v128_t d, v128_t out[4]) {
  v128_t z1 = wasm_i32x4_add(a, d), z2 = wasm_i32x4_add(b, c), z3 = wasm_i32x4_add(a, c), z4 = wasm_i32x4_add(b, d);
  const v128_t z5 = mulc(wasm_i32x4_add(z3, z4), 9633);
  z1 = mulc(z1, -7373);
  z2 = mulc(z2, -20995);
  z3 = wasm_i32x4_add(mulc(z3, -16069), z5);
  z4 = wasm_i32x4_add(mulc(z4, -3196), z5);
  out[0] = wasm_i32x4_add(mulc(a, 2446), wasm_i32x4_add(z1, z3));
  out[1] = wasm_i32x4_add(mulc(b, 16819), wasm_i32x4_add(z2, z4));
  out[2] = wasm_i32x4_add(mulc(c, 25172), wasm_i32x4_add(z2, z3));
  out[3] = wasm_i32x4_add(mulc(d, 12299), wasm_i32x4_add(z1, z4));
}

/* A 1-D pass's last step: its even part (tmp10-13) plus and minus its odd part (odd0-3), descaled by n. */
static inline void idct_outputs(v128_t tmp10, v128_t tmp11, v128_t tmp12, v128_t tmp13, v128_t odd0, v128_t odd1, v128_t odd2, v128_t odd3, int n,
                                v128_t out[8]) {
  out[0] = descale(wasm_i32x4_add(tmp10, odd3), n);
  out[7] = descale(wasm_i32x4_sub(tmp10, odd3), n);
  out[1] = descale(wasm_i32x4_add(tmp11, odd2), n);
  out[6] = descale(wasm_i32x4_sub(tmp11, odd2), n);
  out[2] = descale(wasm_i32x4_add(tmp12, odd1), n);
  out[5] = descale(wasm_i32x4_sub(tmp12, odd1), n);
  out[3] = descale(wasm_i32x4_add(tmp13, odd0), n);
  out[4] = descale(wasm_i32x4_sub(tmp13, odd0), n);
}

/* One 1-D pass of the IDCT on 4 lanes: in[0..7] the 8 inputs of each lane; out[0..7] descaled for the pass. */
static inline void idct_1d(const v128_t in[8], v128_t out[8], int first_pass) {
  const v128_t z1 = mulc(wasm_i32x4_add(in[2], in[6]), 4433);
  const v128_t tmp2 = wasm_i32x4_add(z1, mulc(in[6], -15137));
  const v128_t tmp3 = wasm_i32x4_add(z1, mulc(in[2], 6270));
  const v128_t tmp0 = wasm_i32x4_shl(wasm_i32x4_add(in[0], in[4]), CONST_BITS);
  const v128_t tmp1 = wasm_i32x4_shl(wasm_i32x4_sub(in[0], in[4]), CONST_BITS);
  const v128_t tmp10 = wasm_i32x4_add(tmp0, tmp3), tmp13 = wasm_i32x4_sub(tmp0, tmp3);
  const v128_t tmp11 = wasm_i32x4_add(tmp1, tmp2), tmp12 = wasm_i32x4_sub(tmp1, tmp2);
  v128_t odd[4];
  odd_part(in[7], in[5], in[3], in[1], odd);
  idct_outputs(tmp10, tmp11, tmp12, tmp13, odd[0], odd[1], odd[2], odd[3], first_pass ? CONST_BITS - PASS1_BITS : CONST_BITS + PASS1_BITS + 3, out);
}

/* Lanes whose inputs 1-7 are all zero (the C code's shortcut), as an all-ones mask. */
static inline v128_t ac_zero(const v128_t in[8]) {
  v128_t any = in[1];
  for (int i = 2; i < 8; i++) any = wasm_v128_or(any, in[i]);
  return wasm_i32x4_eq(any, wasm_i32x4_splat(0));
}

/* Four coefficients of row `r`, columns 4 half .. 4 half + 3, in 32-bit lanes; `in` gets them dequantised. */
static inline v128_t load_quarter(JCOEFPTR coef_block, const ISLOW_MULT_TYPE *quant, int r, int half, v128_t *in) {
  const v128_t coef = wasm_i32x4_load16x4(coef_block + 8 * r + 4 * half);
  *in = wasm_i32x4_mul(coef, wasm_v128_load(quant + 8 * r + 4 * half));
  return coef;
}

/* The range-limit table's value for each lane's x (see above). */
static inline v128_t range_limit(v128_t x) {
  const v128_t w = wasm_v128_and(wasm_i32x4_add(x, wasm_i32x4_splat(CENTERJSAMPLE)), wasm_i32x4_splat(1023));
  const v128_t clamped = wasm_i32x4_min(w, wasm_i32x4_splat(255));
  return wasm_v128_and(clamped, wasm_i32x4_lt(w, wasm_i32x4_splat(640)));
}

/* 4x4 transpose of the 32-bit lanes of a, b, c, d in place. */
static inline void transpose4(v128_t *a, v128_t *b, v128_t *c, v128_t *d) {
  const v128_t t0 = wasm_i32x4_shuffle(*a, *b, 0, 4, 1, 5), t1 = wasm_i32x4_shuffle(*a, *b, 2, 6, 3, 7);
  const v128_t t2 = wasm_i32x4_shuffle(*c, *d, 0, 4, 1, 5), t3 = wasm_i32x4_shuffle(*c, *d, 2, 6, 3, 7);
  *a = wasm_i64x2_shuffle(t0, t2, 0, 2);
  *b = wasm_i64x2_shuffle(t0, t2, 1, 3);
  *c = wasm_i64x2_shuffle(t1, t3, 0, 2);
  *d = wasm_i64x2_shuffle(t1, t3, 1, 3);
}

/* The IDCT in 32-bit lanes, for any coefficients (the 16-bit one below covers all but extreme blocks). */
static void idct_islow_32(const ISLOW_MULT_TYPE *quant, JCOEFPTR coef_block, JSAMPARRAY output_buf, JDIMENSION output_col) {
  /* ws[row][half]: the workspace, row r of the block, columns 0-3 (half 0) and 4-7 (half 1). */
  v128_t ws[8][2];
  /* Pass 1: columns, four at a time; lane j of in[r] is row r of column 4 half + j. */
  for (int half = 0; half < 2; half++) {
    v128_t coef[8], in[8], out[8];
    for (int r = 0; r < 8; r++) coef[r] = load_quarter(coef_block, quant, r, half, &in[r]);
    /* (the C code tests the coefficients, not their products: a zero in the table must not take the shortcut) */
    const v128_t zero = ac_zero(coef);
    const v128_t dc = wasm_i32x4_shl(in[0], PASS1_BITS);
    idct_1d(in, out, 1);
    for (int r = 0; r < 8; r++) ws[r][half] = wasm_v128_bitselect(dc, out[r], zero);
  }
  /* Pass 2: rows, four at a time; transpose so that lane j of in[c] is column c of row 4 quarter + j. */
  for (int quarter = 0; quarter < 2; quarter++) {
    v128_t in[8], out[8];
    for (int c = 0; c < 8; c++) in[c] = ws[4 * quarter + (c & 3)][c >> 2];
    transpose4(&in[0], &in[1], &in[2], &in[3]);
    transpose4(&in[4], &in[5], &in[6], &in[7]);
    const v128_t zero = ac_zero(in);
    const v128_t dc = descale(in[0], PASS1_BITS + 3);
    idct_1d(in, out, 0);
    for (int c = 0; c < 8; c++) out[c] = range_limit(wasm_v128_bitselect(dc, out[c], zero));
    /* Back to rows: lane j of out[c] is column c of row 4 quarter + j. */
    transpose4(&out[0], &out[1], &out[2], &out[3]);
    transpose4(&out[4], &out[5], &out[6], &out[7]);
    for (int j = 0; j < 4; j++) {
      const v128_t row16 = wasm_u16x8_narrow_i32x4(out[j], out[4 + j]);
      const v128_t row8 = wasm_u8x16_narrow_i16x8(row16, row16);
      wasm_v128_store64_lane(output_buf[4 * quarter + j] + output_col, row8, 0);
    }
  }
}

/*
 * The same IDCT in 16-bit lanes, eight columns (then rows) an instruction, as libjpeg-turbo's SSE2 version does it:
 * each 1-D output is a sum of products of the inputs with constants that fit 16 bits (the C code's z1..z5 multiplied
 * out, e.g. out 0's odd part 11363 in1 + 9633 in3 + 6437 in5 + 2260 in7), taken a pair of inputs at a time by
 * i32x4_dot_i16x8 into 32 bits. Integer sums are the same whichever way they are grouped, so this is the C arithmetic
 * exactly while the inputs fit 16 bits: the dequantised coefficients, and the first pass's outputs, which the second
 * takes as inputs. A column's first-pass output is at most (11363 S + 1024) / 2^11 for S the sum of its inputs'
 * magnitudes (11363 the largest constant), under 2^15 while S <= 5900 (5905 is the exact limit: recompute it if a
 * constant changes); a block with a column over that (or a product over 16 bits, which saturates above it) takes the
 * 32-bit path. The second pass's sums then stay under about 2.0e9 (32735 times the largest row of constants, 61214),
 * inside 32 bits. The C code's shortcuts for all-zero AC terms give what the full computation gives at these
 * magnitudes, so none is needed.
 */
#define S16_LIMIT 5900

static inline v128_t pairs_of(v128_t a, v128_t b, int high) {
  return high ? wasm_i16x8_shuffle(a, b, 4, 12, 5, 13, 6, 14, 7, 15) : wasm_i16x8_shuffle(a, b, 0, 8, 1, 9, 2, 10, 3, 11);
}

static inline v128_t dot(v128_t pairs, int16_t c1, int16_t c2) {
  return wasm_i32x4_dot_i16x8(pairs, wasm_i16x8_make(c1, c2, c1, c2, c1, c2, c1, c2));
}

/* One 1-D pass on eight 16-bit lanes: in[k] the k-th input of each lane; out[k] descaled by n, as 16 bits. */
static inline void idct_1d_16(const v128_t in[8], v128_t out[8], int n) {
  v128_t half_out[2][8];
  for (int high = 0; high < 2; high++) {
    const v128_t p04 = pairs_of(in[0], in[4], high), p26 = pairs_of(in[2], in[6], high);
    const v128_t p13 = pairs_of(in[1], in[3], high), p57 = pairs_of(in[5], in[7], high);
    const v128_t tmp0 = dot(p04, 8192, 8192), tmp1 = dot(p04, 8192, -8192);
    const v128_t tmp2 = dot(p26, 4433, -10704), tmp3 = dot(p26, 10703, 4433);
    const v128_t tmp10 = wasm_i32x4_add(tmp0, tmp3), tmp13 = wasm_i32x4_sub(tmp0, tmp3);
    const v128_t tmp11 = wasm_i32x4_add(tmp1, tmp2), tmp12 = wasm_i32x4_sub(tmp1, tmp2);
    const v128_t odd0 = wasm_i32x4_add(dot(p13, 2260, -6436), dot(p57, 9633, -11363));
    const v128_t odd1 = wasm_i32x4_add(dot(p13, 6437, -11362), dot(p57, 2261, 9633));
    const v128_t odd2 = wasm_i32x4_add(dot(p13, 9633, -2259), dot(p57, -11362, -6436));
    const v128_t odd3 = wasm_i32x4_add(dot(p13, 11363, 9633), dot(p57, 6437, 2260));
    idct_outputs(tmp10, tmp11, tmp12, tmp13, odd0, odd1, odd2, odd3, n, half_out[high]);
  }
  for (int k = 0; k < 8; k++) out[k] = wasm_i16x8_narrow_i32x4(half_out[0][k], half_out[1][k]);
}

/* 8x8 transpose of 16-bit lanes in place: v[r] lane c becomes v[c] lane r. */
static inline void transpose8(v128_t v[8]) {
  v128_t t[8], u[8];
  for (int i = 0; i < 4; i++) {
    t[2 * i] = wasm_i16x8_shuffle(v[2 * i], v[2 * i + 1], 0, 8, 1, 9, 2, 10, 3, 11);
    t[2 * i + 1] = wasm_i16x8_shuffle(v[2 * i], v[2 * i + 1], 4, 12, 5, 13, 6, 14, 7, 15);
  }
  for (int i = 0; i < 2; i++) {
    u[4 * i] = wasm_i32x4_shuffle(t[4 * i], t[4 * i + 2], 0, 4, 1, 5);
    u[4 * i + 1] = wasm_i32x4_shuffle(t[4 * i], t[4 * i + 2], 2, 6, 3, 7);
    u[4 * i + 2] = wasm_i32x4_shuffle(t[4 * i + 1], t[4 * i + 3], 0, 4, 1, 5);
    u[4 * i + 3] = wasm_i32x4_shuffle(t[4 * i + 1], t[4 * i + 3], 2, 6, 3, 7);
  }
  for (int i = 0; i < 4; i++) {
    v[2 * i] = wasm_i64x2_shuffle(u[i], u[4 + i], 0, 2);
    v[2 * i + 1] = wasm_i64x2_shuffle(u[i], u[4 + i], 1, 3);
  }
}

/* range_limit (above) on 16-bit lanes. */
static inline v128_t range_limit_16(v128_t x) {
  const v128_t w = wasm_v128_and(wasm_i16x8_add(x, wasm_i16x8_splat(CENTERJSAMPLE)), wasm_i16x8_splat(1023));
  const v128_t clamped = wasm_u16x8_min(w, wasm_i16x8_splat(255));
  return wasm_v128_and(clamped, wasm_u16x8_lt(w, wasm_i16x8_splat(640)));
}

/* Returns 0 (nothing written) when the block is outside the 16-bit path's range. */
static int idct_islow_16(const ISLOW_MULT_TYPE *quant, JCOEFPTR coef_block, JSAMPARRAY output_buf, JDIMENSION output_col) {
  v128_t in[8], out[8];
  v128_t sum = wasm_i16x8_splat(0);
  for (int r = 0; r < 8; r++) {
    const v128_t coef = wasm_v128_load(coef_block + 8 * r);
    const v128_t q = wasm_i16x8_narrow_i32x4(wasm_v128_load(quant + 8 * r), wasm_v128_load(quant + 8 * r + 4));
    in[r] = wasm_i16x8_narrow_i32x4(wasm_i32x4_extmul_low_i16x8(coef, q), wasm_i32x4_extmul_high_i16x8(coef, q));
    sum = wasm_u16x8_add_sat(sum, wasm_i16x8_abs(in[r]));
  }
  if (!wasm_i16x8_all_true(wasm_u16x8_le(sum, wasm_i16x8_splat(S16_LIMIT)))) return 0;
  /* Pass 1: columns (lane c of in[r]: row r of column c), into a workspace scaled by 2^PASS1_BITS. */
  idct_1d_16(in, out, CONST_BITS - PASS1_BITS);
  /* Pass 2: rows (lane r of out[c]: column c of row r). */
  transpose8(out);
  idct_1d_16(out, in, CONST_BITS + PASS1_BITS + 3);
  for (int c = 0; c < 8; c++) in[c] = range_limit_16(in[c]);
  transpose8(in);
  for (int r = 0; r < 8; r += 2) {
    const v128_t rows = wasm_u8x16_narrow_i16x8(in[r], in[r + 1]);
    wasm_v128_store64_lane(output_buf[r] + output_col, rows, 0);
    wasm_v128_store64_lane(output_buf[r + 1] + output_col, rows, 1);
  }
  return 1;
}

GLOBAL(int) jsimd_can_idct_islow(void) { return sizeof(ISLOW_MULT_TYPE) == 4 && sizeof(JCOEF) == 2; }

GLOBAL(void) jsimd_idct_islow(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block, JSAMPARRAY output_buf,
                              JDIMENSION output_col) {
  (void)cinfo;
  const ISLOW_MULT_TYPE *quant = (const ISLOW_MULT_TYPE *)compptr->dct_table;
  /* A block with no AC coefficient (common in chroma and in flat areas) takes both passes' shortcuts in every column
     and row: one value, range_limit(DESCALE(DC << PASS1_BITS, PASS1_BITS + 3)), for all 64 samples. */
  v128_t ac = wasm_v128_and(wasm_v128_load(coef_block), wasm_i16x8_make(0, -1, -1, -1, -1, -1, -1, -1));
  for (int r = 1; r < 8; r++) ac = wasm_v128_or(ac, wasm_v128_load(coef_block + 8 * r));
  if (!wasm_v128_any_true(ac)) {
    const int32_t dc = (int32_t)((uint32_t)((int32_t)coef_block[0] * quant[0]) << PASS1_BITS);
    const v128_t v = range_limit(descale(wasm_i32x4_splat(dc), PASS1_BITS + 3));
    const v128_t row8 = wasm_i8x16_splat((int8_t)wasm_i32x4_extract_lane(v, 0));
    for (int r = 0; r < 8; r++) wasm_v128_store64_lane(output_buf[r] + output_col, row8, 0);
    return;
  }
  if (!idct_islow_16(quant, coef_block, output_buf, output_col)) idct_islow_32(quant, coef_block, output_buf, output_col);
}

/*
 * The reduced IDCT for decoding at 1/2 scale (jidctred.c's jpeg_idct_4x4: an 8x8 block's coefficients to 4x4
 * samples, the common case of a phone photo to a web size), in four 32-bit lanes, term for term: the first pass takes
 * columns 0-3 and 4-7 four at a time (column 4, which the second pass never reads, computed and left unused), the
 * second the four rows at once. The C code's shortcuts for columns and rows without AC terms are taken lane by lane,
 * so that even out-of-range coefficients give its bytes.
 */
static inline void idct_4x4_1d(v128_t in0, v128_t in1, v128_t in2, v128_t in3, v128_t in5, v128_t in6, v128_t in7, int n,
                               v128_t out[4]) {
  const v128_t tmp0 = wasm_i32x4_shl(in0, CONST_BITS + 1);
  const v128_t tmp2 = wasm_i32x4_add(mulc(in2, 15137), mulc(in6, -6270));
  const v128_t tmp10 = wasm_i32x4_add(tmp0, tmp2), tmp12 = wasm_i32x4_sub(tmp0, tmp2);
  /* in7, in5, in3, in1 are the C code's z1, z2, z3, z4 */
  const v128_t odd0 = wasm_i32x4_add(wasm_i32x4_add(mulc(in7, -1730), mulc(in5, 11893)), wasm_i32x4_add(mulc(in3, -17799), mulc(in1, 8697)));
  const v128_t odd2 = wasm_i32x4_add(wasm_i32x4_add(mulc(in7, -4176), mulc(in5, -4926)), wasm_i32x4_add(mulc(in3, 7373), mulc(in1, 20995)));
  out[0] = descale(wasm_i32x4_add(tmp10, odd2), n);
  out[3] = descale(wasm_i32x4_sub(tmp10, odd2), n);
  out[1] = descale(wasm_i32x4_add(tmp12, odd0), n);
  out[2] = descale(wasm_i32x4_sub(tmp12, odd0), n);
}

GLOBAL(int) jsimd_can_idct_4x4(void) { return sizeof(ISLOW_MULT_TYPE) == 4 && sizeof(JCOEF) == 2; }

GLOBAL(void) jsimd_idct_4x4(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block, JSAMPARRAY output_buf,
                            JDIMENSION output_col) {
  (void)cinfo;
  const ISLOW_MULT_TYPE *quant = (const ISLOW_MULT_TYPE *)compptr->dct_table;
  /* ws[half][r]: the first pass's output row r for columns 0-3 (half 0) and 4-7 (half 1) */
  v128_t ws[2][4];
  for (int half = 0; half < 2; half++) {
    v128_t coef[8], in[8];
    for (int r = 0; r < 8; r++)
      if (r != 4) coef[r] = load_quarter(coef_block, quant, r, half, &in[r]);
    idct_4x4_1d(in[0], in[1], in[2], in[3], in[5], in[6], in[7], CONST_BITS - PASS1_BITS + 1, ws[half]);
    /* (as the C code, the coefficients tested, not their products) */
    const v128_t ac = wasm_v128_or(wasm_v128_or(wasm_v128_or(coef[1], coef[2]), wasm_v128_or(coef[3], coef[5])), wasm_v128_or(coef[6], coef[7]));
    const v128_t flat = wasm_i32x4_eq(ac, wasm_i32x4_splat(0));
    const v128_t dc = wasm_i32x4_shl(in[0], PASS1_BITS);
    for (int r = 0; r < 4; r++) ws[half][r] = wasm_v128_bitselect(dc, ws[half][r], flat);
  }
  /* columns as vectors of the four rows: col[c] lane r is the workspace's row r, column c */
  v128_t col[8];
  for (int half = 0; half < 2; half++) {
    for (int r = 0; r < 4; r++) col[4 * half + r] = ws[half][r];
    transpose4(&col[4 * half], &col[4 * half + 1], &col[4 * half + 2], &col[4 * half + 3]);
  }
  v128_t out[4];
  idct_4x4_1d(col[0], col[1], col[2], col[3], col[5], col[6], col[7], CONST_BITS + PASS1_BITS + 3 + 1, out);
  const v128_t ac = wasm_v128_or(wasm_v128_or(wasm_v128_or(col[1], col[2]), wasm_v128_or(col[3], col[5])), wasm_v128_or(col[6], col[7]));
  const v128_t flat = wasm_i32x4_eq(ac, wasm_i32x4_splat(0));
  const v128_t dc = descale(col[0], PASS1_BITS + 3);
  for (int c = 0; c < 4; c++) out[c] = range_limit(wasm_v128_bitselect(dc, out[c], flat));
  /* out[c] lane r is row r, column c: turned, each row's four samples are one lane's bytes */
  transpose4(&out[0], &out[1], &out[2], &out[3]);
  const v128_t bytes = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(out[0], out[1]), wasm_i16x8_narrow_i32x4(out[2], out[3]));
  wasm_v128_store32_lane(output_buf[0] + output_col, bytes, 0);
  wasm_v128_store32_lane(output_buf[1] + output_col, bytes, 1);
  wasm_v128_store32_lane(output_buf[2] + output_col, bytes, 2);
  wasm_v128_store32_lane(output_buf[3] + output_col, bytes, 3);
}

/*
 * The reduced IDCT for decoding at 1/4 scale, and 4:2:0 chroma at 1/8 (jidctred.c's jpeg_idct_2x2: an 8x8 block to
 * 2x2 samples), the same way: the first pass on columns 0-3 and 4-7 (2, 4 and 6 computed and left unused), the second
 * on both rows at once in two lanes, the C code's all-zero shortcuts lane by lane.
 */
static inline void idct_2x2_1d(v128_t in0, v128_t in1, v128_t in3, v128_t in5, v128_t in7, int n, v128_t *out0, v128_t *out1) {
  const v128_t tmp10 = wasm_i32x4_shl(in0, CONST_BITS + 2);
  const v128_t tmp0 = wasm_i32x4_add(wasm_i32x4_add(mulc(in7, -5906), mulc(in5, 6967)), wasm_i32x4_add(mulc(in3, -10426), mulc(in1, 29692)));
  *out0 = descale(wasm_i32x4_add(tmp10, tmp0), n);
  *out1 = descale(wasm_i32x4_sub(tmp10, tmp0), n);
}

GLOBAL(int) jsimd_can_idct_2x2(void) { return sizeof(ISLOW_MULT_TYPE) == 4 && sizeof(JCOEF) == 2; }

GLOBAL(void) jsimd_idct_2x2(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block, JSAMPARRAY output_buf,
                            JDIMENSION output_col) {
  (void)cinfo;
  const ISLOW_MULT_TYPE *quant = (const ISLOW_MULT_TYPE *)compptr->dct_table;
  /* ws[half][r]: the first pass's output row r for columns 0-3 (half 0) and 4-7 (half 1) */
  v128_t ws[2][2];
  for (int half = 0; half < 2; half++) {
    v128_t coef[8], in[8];
    for (int r = 0; r < 8; r += (r == 0 ? 1 : 2)) coef[r] = load_quarter(coef_block, quant, r, half, &in[r]);
    idct_2x2_1d(in[0], in[1], in[3], in[5], in[7], CONST_BITS - PASS1_BITS + 2, &ws[half][0], &ws[half][1]);
    const v128_t flat = wasm_i32x4_eq(wasm_v128_or(wasm_v128_or(coef[1], coef[3]), wasm_v128_or(coef[5], coef[7])), wasm_i32x4_splat(0));
    const v128_t dc = wasm_i32x4_shl(in[0], PASS1_BITS);
    ws[half][0] = wasm_v128_bitselect(dc, ws[half][0], flat);
    ws[half][1] = wasm_v128_bitselect(dc, ws[half][1], flat);
  }
  /* the columns the second pass reads, lanes 0 and 1 its two rows */
  const v128_t c01 = wasm_i32x4_shuffle(ws[0][0], ws[0][1], 0, 4, 1, 5);
  const v128_t c3 = wasm_i32x4_shuffle(ws[0][0], ws[0][1], 3, 7, 3, 7);
  const v128_t c57 = wasm_i32x4_shuffle(ws[1][0], ws[1][1], 1, 5, 3, 7);
  const v128_t c1 = wasm_i32x4_shuffle(c01, c01, 2, 3, 2, 3), c7 = wasm_i32x4_shuffle(c57, c57, 2, 3, 2, 3);
  v128_t out0, out1;
  idct_2x2_1d(c01, c1, c3, c57, c7, CONST_BITS + PASS1_BITS + 3 + 2, &out0, &out1);
  const v128_t flat = wasm_i32x4_eq(wasm_v128_or(wasm_v128_or(c1, c3), wasm_v128_or(c57, c7)), wasm_i32x4_splat(0));
  const v128_t dc = descale(c01, PASS1_BITS + 3);
  out0 = range_limit(wasm_v128_bitselect(dc, out0, flat));
  out1 = range_limit(wasm_v128_bitselect(dc, out1, flat));
  /* row 0's two samples, then row 1's */
  const v128_t rows = wasm_i32x4_shuffle(out0, out1, 0, 4, 1, 5);
  const v128_t bytes = wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(rows, rows), wasm_i16x8_splat(0));
  wasm_v128_store16_lane(output_buf[0] + output_col, bytes, 0);
  wasm_v128_store16_lane(output_buf[1] + output_col, bytes, 1);
}

/*
 * The forward DCT, jfdctint.c's jpeg_fdct_islow in four 32-bit lanes, term for term (the same constants and
 * descaling; the odd part's sums grouped as odd_part groups them, the same values), and the sample conversion before
 * it (jcdctmgr.c's convsamp: samples minus 128 as 32-bit DCTELEMs). Samples are 8 bits, so nothing here can reach
 * the 32-bit limits.
 */
GLOBAL(int) jsimd_can_convsamp(void) { return sizeof(DCTELEM) == 4 && BITS_IN_JSAMPLE == 8; }

GLOBAL(void) jsimd_convsamp(JSAMPARRAY sample_data, JDIMENSION start_col, DCTELEM *workspace) {
  for (int r = 0; r < DCTSIZE; r++) {
    const v128_t row = wasm_i16x8_sub(wasm_u16x8_load8x8(sample_data[r] + start_col), wasm_i16x8_splat(CENTERJSAMPLE));
    wasm_v128_store(workspace + 8 * r, wasm_i32x4_extend_low_i16x8(row));
    wasm_v128_store(workspace + 8 * r + 4, wasm_i32x4_extend_high_i16x8(row));
  }
}

/* One 1-D pass in place on 4 lanes: d[0..7] the 8 values of each lane's row (first pass) or column. */
static inline void fdct_1d(v128_t d[8], int first_pass) {
  const v128_t tmp0 = wasm_i32x4_add(d[0], d[7]), tmp7 = wasm_i32x4_sub(d[0], d[7]);
  const v128_t tmp1 = wasm_i32x4_add(d[1], d[6]), tmp6 = wasm_i32x4_sub(d[1], d[6]);
  const v128_t tmp2 = wasm_i32x4_add(d[2], d[5]), tmp5 = wasm_i32x4_sub(d[2], d[5]);
  const v128_t tmp3 = wasm_i32x4_add(d[3], d[4]), tmp4 = wasm_i32x4_sub(d[3], d[4]);
  const v128_t tmp10 = wasm_i32x4_add(tmp0, tmp3), tmp13 = wasm_i32x4_sub(tmp0, tmp3);
  const v128_t tmp11 = wasm_i32x4_add(tmp1, tmp2), tmp12 = wasm_i32x4_sub(tmp1, tmp2);
  const int n = first_pass ? CONST_BITS - PASS1_BITS : CONST_BITS + PASS1_BITS;
  if (first_pass) {
    d[0] = wasm_i32x4_shl(wasm_i32x4_add(tmp10, tmp11), PASS1_BITS);
    d[4] = wasm_i32x4_shl(wasm_i32x4_sub(tmp10, tmp11), PASS1_BITS);
  } else {
    d[0] = descale(wasm_i32x4_add(tmp10, tmp11), PASS1_BITS);
    d[4] = descale(wasm_i32x4_sub(tmp10, tmp11), PASS1_BITS);
  }
  const v128_t z1 = mulc(wasm_i32x4_add(tmp12, tmp13), 4433);
  d[2] = descale(wasm_i32x4_add(z1, mulc(tmp13, 6270)), n);
  d[6] = descale(wasm_i32x4_add(z1, mulc(tmp12, -15137)), n);
  v128_t odd[4];
  odd_part(tmp4, tmp5, tmp6, tmp7, odd);
  d[7] = descale(odd[0], n);
  d[5] = descale(odd[1], n);
  d[3] = descale(odd[2], n);
  d[1] = descale(odd[3], n);
}

GLOBAL(int) jsimd_can_fdct_islow(void) { return sizeof(DCTELEM) == 4; }

GLOBAL(void) jsimd_fdct_islow(DCTELEM *data) {
  /* v[r][h]: row r, columns 4 h to 4 h + 3. */
  v128_t v[8][2];
  for (int r = 0; r < 8; r++)
    for (int h = 0; h < 2; h++) v[r][h] = wasm_v128_load(data + 8 * r + 4 * h);
  /* Pass 1, rows four at a time: transposed, lane j of d[c] is column c of row 4 g + j; then back. */
  for (int g = 0; g < 2; g++) {
    v128_t d[8];
    for (int c = 0; c < 8; c++) d[c] = v[4 * g + (c & 3)][c >> 2];
    transpose4(&d[0], &d[1], &d[2], &d[3]);
    transpose4(&d[4], &d[5], &d[6], &d[7]);
    fdct_1d(d, 1);
    transpose4(&d[0], &d[1], &d[2], &d[3]);
    transpose4(&d[4], &d[5], &d[6], &d[7]);
    for (int c = 0; c < 8; c++) v[4 * g + (c & 3)][c >> 2] = d[c];
  }
  /* Pass 2, columns four at a time: lane j of d[r] is row r of column 4 h + j. */
  for (int h = 0; h < 2; h++) {
    v128_t d[8];
    for (int r = 0; r < 8; r++) d[r] = v[r][h];
    fdct_1d(d, 0);
    for (int r = 0; r < 8; r++) wasm_v128_store(data + 8 * r + 4 * h, d[r]);
  }
}

/*
 * 2:1 downsampling of 4:2:0 chroma when encoding (jcsample.c's h2v2_downsample): each output sample the average of
 * a 2x2 block, (sum + bias) >> 2 with the bias alternating 1, 2 along the row, eight outputs a step (an output row is
 * whole blocks wide, so there is no tail); the input's right edge first repeated out to that width, as the C code does.
 */
GLOBAL(int) jsimd_can_h2v2_downsample(void) { return BITS_IN_JSAMPLE == 8; }

GLOBAL(void) jsimd_h2v2_downsample(j_compress_ptr cinfo, jpeg_component_info *compptr, JSAMPARRAY input_data, JSAMPARRAY output_data) {
  const JDIMENSION output_cols = compptr->width_in_blocks * DCTSIZE;
  if (output_cols * 2 > cinfo->image_width)
    for (int r = 0; r < cinfo->max_v_samp_factor; r++) {
      JSAMPROW edge = input_data[r] + cinfo->image_width;
      memset(edge, edge[-1], output_cols * 2 - cinfo->image_width);
    }
  const v128_t bias = wasm_i16x8_make(1, 2, 1, 2, 1, 2, 1, 2);
  for (int outrow = 0; outrow < compptr->v_samp_factor; outrow++) {
    const JSAMPROW in0 = input_data[2 * outrow], in1 = input_data[2 * outrow + 1], out = output_data[outrow];
    for (JDIMENSION col = 0; col < output_cols; col += 8) {
      const v128_t sums = wasm_i16x8_add(wasm_u16x8_extadd_pairwise_u8x16(wasm_v128_load(in0 + 2 * col)),
                                         wasm_u16x8_extadd_pairwise_u8x16(wasm_v128_load(in1 + 2 * col)));
      const v128_t avg = wasm_u16x8_shr(wasm_i16x8_add(sums, bias), 2);
      wasm_v128_store64_lane(out + col, wasm_u8x16_narrow_i16x8(avg, avg), 0);
    }
  }
}

/*
 * Quantisation by reciprocal (jcdctmgr.c's quantize with 32-bit DCTELEM): for each coefficient t, with the table's
 * reciprocal f, correction c and shift s, |t| + c times f as 64 bits, shifted right by 32 + s, the sign put back. The
 * high 32 bits come from SIMD128's widening 32 x 32 -> 64 multiply; the shift by s, which differs from coefficient to
 * coefficient and has no SIMD128 form, is a multiply by 2^(16 - s) and a shift by 16, exact while the high half stays
 * under 2^(16 + s): it is about (|t| + c) 2^s / divisor, and |t| + c stays under 2^16 for 8-bit samples. A table with a
 * shift outside 0-16 (a divisor of 1, which compute_reciprocal already leaves to the C code) takes the C arithmetic.
 */
static void quantize_c(JCOEFPTR coef_block, const DCTELEM *divisors, const DCTELEM *workspace) {
  for (int i = 0; i < DCTSIZE2; i++) {
    const DCTELEM t = workspace[i];
    const unsigned long long product = (unsigned long long)((UDCTELEM)(t < 0 ? -t : t) + (UDCTELEM)divisors[i + DCTSIZE2])
                                       * (UDCTELEM)divisors[i];
    const DCTELEM q = (DCTELEM)(product >> (divisors[i + DCTSIZE2 * 3] + sizeof(DCTELEM) * 8));
    coef_block[i] = (JCOEF)(t < 0 ? -q : q);
  }
}

GLOBAL(int) jsimd_can_quantize(void) { return sizeof(DCTELEM) == 4 && sizeof(JCOEF) == 2; }

GLOBAL(void) jsimd_quantize(JCOEFPTR coef_block, DCTELEM *divisors, DCTELEM *workspace) {
  const DCTELEM *recip = divisors, *corr = divisors + DCTSIZE2, *shift = divisors + DCTSIZE2 * 3;
  /* 2^(16 - s) for each coefficient, made as a float's exponent; and whether every s is within 0-16. */
  v128_t mult[DCTSIZE2 / 4];
  v128_t low = wasm_i32x4_splat(0), high = wasm_i32x4_splat(0);
  for (int k = 0; k < DCTSIZE2 / 4; k++) {
    const v128_t s = wasm_v128_load(shift + 4 * k);
    low = wasm_i32x4_min(low, s);
    high = wasm_i32x4_max(high, s);
    mult[k] = wasm_i32x4_trunc_sat_f32x4(wasm_i32x4_shl(wasm_i32x4_sub(wasm_i32x4_splat(127 + 16), s), 23));
  }
  if (!wasm_i32x4_all_true(wasm_i32x4_le(high, wasm_i32x4_splat(16))) || !wasm_i32x4_all_true(wasm_i32x4_ge(low, wasm_i32x4_splat(0)))) {
    quantize_c(coef_block, divisors, workspace);
    return;
  }
  for (int k = 0; k < DCTSIZE2; k += 8) {
    v128_t q[2];
    for (int h = 0; h < 2; h++) {
      const int at = k + 4 * h;
      const v128_t t = wasm_v128_load(workspace + at);
      const v128_t sign = wasm_i32x4_shr(t, 31);
      const v128_t x = wasm_i32x4_add(wasm_i32x4_abs(t), wasm_v128_load(corr + at));
      const v128_t f = wasm_v128_load(recip + at);
      const v128_t hi = wasm_i32x4_shuffle(wasm_u64x2_extmul_low_u32x4(x, f), wasm_u64x2_extmul_high_u32x4(x, f), 1, 3, 5, 7);
      const v128_t v = wasm_u32x4_shr(wasm_i32x4_mul(hi, mult[at / 4]), 16);
      q[h] = wasm_i32x4_sub(wasm_v128_xor(v, sign), sign);
    }
    wasm_v128_store(coef_block + k, wasm_i16x8_narrow_i32x4(q[0], q[1]));
  }
}

/*
 * Fancy (triangle) upsampling of 2:1 horizontal, and 2:1 horizontal and vertical, chroma (jdsample.c's
 * h2v1_fancy_upsample and h2v2_fancy_upsample): eight input columns, sixteen output samples, a step, in 16-bit lanes
 * where the C code's sums (at most 16 x 255 + 8) fit. The first and last columns and those left over at each row's
 * end take the C code's scalar path, so every input read stays within the row's downsampled width.
 */
static inline void store_pairs(JSAMPLE *out, v128_t even, v128_t odd) {
  wasm_v128_store(out, wasm_v128_or(even, wasm_i16x8_shl(odd, 8)));
}

/* Eight columns' sums 3 in0 + in1 from column `col`, as 16-bit lanes. */
static inline v128_t colsums(const JSAMPLE *in0, const JSAMPLE *in1, JDIMENSION col) {
  return wasm_i16x8_add(wasm_i16x8_mul(wasm_u16x8_load8x8(in0 + col), wasm_i16x8_splat(3)), wasm_u16x8_load8x8(in1 + col));
}

/* One output row from its nearest input row and the next nearest (above or below). */
static void h2v2_fancy_row(const JSAMPLE *in0, const JSAMPLE *in1, JSAMPLE *out, JDIMENSION width) {
#define COLSUM(i) (in0[i] * 3 + in1[i])
  int last, this = COLSUM(0), next = COLSUM(1);
  out[0] = (JSAMPLE)((this * 4 + 8) >> 4);
  out[1] = (JSAMPLE)((this * 3 + next + 7) >> 4);
  JDIMENSION col = 1;
  const v128_t three = wasm_i16x8_splat(3), eight = wasm_i16x8_splat(8), seven = wasm_i16x8_splat(7);
  for (; col + 9 <= width; col += 8) {
    const v128_t p = colsums(in0, in1, col - 1), n = colsums(in0, in1, col + 1);
    const v128_t c3 = wasm_i16x8_mul(colsums(in0, in1, col), three);
    store_pairs(out + 2 * col, wasm_u16x8_shr(wasm_i16x8_add(wasm_i16x8_add(c3, p), eight), 4),
                wasm_u16x8_shr(wasm_i16x8_add(wasm_i16x8_add(c3, n), seven), 4));
  }
  for (; col + 1 < width; col++) {
    last = COLSUM(col - 1), this = COLSUM(col), next = COLSUM(col + 1);
    out[2 * col] = (JSAMPLE)((this * 3 + last + 8) >> 4);
    out[2 * col + 1] = (JSAMPLE)((this * 3 + next + 7) >> 4);
  }
  last = COLSUM(col - 1), this = COLSUM(col);
  out[2 * col] = (JSAMPLE)((this * 3 + last + 8) >> 4);
  out[2 * col + 1] = (JSAMPLE)((this * 4 + 7) >> 4);
#undef COLSUM
}

GLOBAL(int) jsimd_can_h2v2_fancy_upsample(void) { return 1; }

GLOBAL(void) jsimd_h2v2_fancy_upsample(j_decompress_ptr cinfo, jpeg_component_info *compptr, JSAMPARRAY input_data,
                                       JSAMPARRAY *output_data_ptr) {
  JSAMPARRAY output_data = *output_data_ptr;
  for (int inrow = 0, outrow = 0; outrow < cinfo->max_v_samp_factor; inrow++) {
    h2v2_fancy_row(input_data[inrow], input_data[inrow - 1], output_data[outrow++], compptr->downsampled_width);
    h2v2_fancy_row(input_data[inrow], input_data[inrow + 1], output_data[outrow++], compptr->downsampled_width);
  }
}

GLOBAL(int) jsimd_can_h2v1_fancy_upsample(void) { return 1; }

GLOBAL(void) jsimd_h2v1_fancy_upsample(j_decompress_ptr cinfo, jpeg_component_info *compptr, JSAMPARRAY input_data,
                                       JSAMPARRAY *output_data_ptr) {
  JSAMPARRAY output_data = *output_data_ptr;
  const JDIMENSION width = compptr->downsampled_width;
  const v128_t three = wasm_i16x8_splat(3), one = wasm_i16x8_splat(1), two = wasm_i16x8_splat(2);
  for (int row = 0; row < cinfo->max_v_samp_factor; row++) {
    const JSAMPLE *in = input_data[row];
    JSAMPLE *out = output_data[row];
    out[0] = in[0];
    out[1] = (JSAMPLE)((in[0] * 3 + in[1] + 2) >> 2);
    JDIMENSION col = 1;
    for (; col + 9 <= width; col += 8) {
      const v128_t c3 = wasm_i16x8_mul(wasm_u16x8_load8x8(in + col), three);
      store_pairs(out + 2 * col, wasm_u16x8_shr(wasm_i16x8_add(wasm_i16x8_add(c3, wasm_u16x8_load8x8(in + col - 1)), one), 2),
                  wasm_u16x8_shr(wasm_i16x8_add(wasm_i16x8_add(c3, wasm_u16x8_load8x8(in + col + 1)), two), 2));
    }
    for (; col + 1 < width; col++) {
      out[2 * col] = (JSAMPLE)((in[col] * 3 + in[col - 1] + 1) >> 2);
      out[2 * col + 1] = (JSAMPLE)((in[col] * 3 + in[col + 1] + 2) >> 2);
    }
    out[2 * col] = (JSAMPLE)((in[col] * 3 + in[col - 1] + 1) >> 2);
    out[2 * col + 1] = in[col];
  }
}
