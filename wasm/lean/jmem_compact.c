/*
 * libjpeg's memory backend (in place of jmemnobs.c): malloc, and a backing store that keeps a virtual array's
 * coefficient blocks compressed in memory instead of in a file.
 *
 * A progressive JPEG's decoder keeps every DCT coefficient until its last scan (2 bytes each: 70 MiB at 24 MP
 * 4:2:0). With `max_memory_to_use` set (lean.c's jd_open does for a progressive JPEG), jmemmgr keeps only a
 * strip of each array's block rows in memory and swaps the rest through this store, which holds each row as
 * its blocks' nonzero coefficients: per block a byte saying how many bytes of the nonzero mask follow, the
 * mask (bit k: coefficient k, natural order), and each nonzero value zigzagged as a 1-3 byte varint, or the block as
 * it is where that is smaller. A photo's blocks are mostly zeros, so a row takes a sixth to a tenth of its 128 bytes a
 * block, and never more than 129.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wasm_simd128.h>

#define JPEG_INTERNALS
#include "jinclude.h"
#include "jpeglib.h"
#include "jmemsys.h"

void *jpeg_get_small(j_common_ptr cinfo, size_t size) { (void)cinfo; return malloc(size); }
void jpeg_free_small(j_common_ptr cinfo, void *object, size_t size) { (void)cinfo, (void)size; free(object); }
void *jpeg_get_large(j_common_ptr cinfo, size_t size) { (void)cinfo; return malloc(size); }
void jpeg_free_large(j_common_ptr cinfo, void *object, size_t size) { (void)cinfo, (void)size; free(object); }
long jpeg_mem_init(j_common_ptr cinfo) { (void)cinfo; return 0; }
void jpeg_mem_term(j_common_ptr cinfo) { (void)cinfo; }

/*
 * With max_memory_to_use set, the strips in memory are 4 times the least jmemmgr can work with (the rows one
 * access reads): moving on by one access then re-reads a strip every third access, not every access. What the
 * arrays hold in all is then the store's, so the setting says only that one is wanted, not how large it is.
 */
size_t jpeg_mem_available(j_common_ptr cinfo, size_t min_bytes_needed, size_t max_bytes_needed, size_t already_allocated) {
  (void)already_allocated;
  return cinfo->mem->max_memory_to_use ? 4 * min_bytes_needed : max_bytes_needed;
}

/* Sample arrays (two-pass colour quantisation, never used here) have no store. */
void jpeg_open_backing_store(j_common_ptr cinfo, backing_store_ptr info, long total_bytes_needed) {
  (void)info, (void)total_bytes_needed;
  ERREXIT(cinfo, JERR_NO_BACKING_STORE);
}

typedef struct {
  long rows, blocks;
  uint8_t **row;      /* each row's bytes, NULL until written */
  uint32_t *capacity; /* and what each row's allocation holds */
  uint8_t *scratch;   /* one row at its largest: 9 + 64 * 3 bytes a block before a block falls back to RAW */
} Store;

/* The nonzero coefficients of a block, bit k for coefficient k. */
static uint64_t nonzero(const JCOEF *c) {
  const v128_t zero = wasm_i16x8_splat(0);
  uint64_t mask = 0;
  for (int i = 0; i < 4; i++) {
    const v128_t a = wasm_i16x8_ne(wasm_v128_load(c + 16 * i), zero), b = wasm_i16x8_ne(wasm_v128_load(c + 16 * i + 8), zero);
    mask |= (uint64_t)wasm_i8x16_bitmask(wasm_i8x16_narrow_i16x8(a, b)) << (16 * i);
  }
  return mask;
}

/* A block kept as it is, after a count byte of RAW: one whose nonzero values would take more room than that. */
#define RAW 9

static uint8_t *pack_block(uint8_t *out, const JCOEF *c) {
  uint8_t *const start = out;
  uint64_t mask = nonzero(c);
  const int bytes = mask ? (71 - __builtin_clzll(mask)) / 8 : 0;
  *out++ = (uint8_t)bytes;
  for (int i = 0; i < bytes; i++) *out++ = (uint8_t)(mask >> (8 * i));
  while (mask) {
    const int k = __builtin_ctzll(mask);
    mask &= mask - 1;
    uint32_t z = (uint16_t)(((uint16_t)c[k] << 1) ^ (uint16_t)(c[k] >> 15));
    while (z >= 0x80) *out++ = (uint8_t)(z | 0x80), z >>= 7;
    *out++ = (uint8_t)z;
  }
  if (out - start <= 1 + (int)sizeof(JBLOCK)) return out;
  *start = RAW;
  memcpy(start + 1, c, sizeof(JBLOCK));
  return start + 1 + sizeof(JBLOCK);
}

static const uint8_t *unpack_block(const uint8_t *in, JCOEF *c) {
  const int bytes = *in++;
  if (bytes == RAW) {
    memcpy(c, in, sizeof(JBLOCK));
    return in + sizeof(JBLOCK);
  }
  memset(c, 0, sizeof(JBLOCK));
  uint64_t mask = 0;
  for (int i = 0; i < bytes; i++) mask |= (uint64_t)*in++ << (8 * i);
  while (mask) {
    const int k = __builtin_ctzll(mask);
    mask &= mask - 1;
    uint32_t z = 0;
    for (int shift = 0;; shift += 7) {
      const uint8_t b = *in++;
      z |= (uint32_t)(b & 0x7F) << shift;
      if (b < 0x80) break;
    }
    c[k] = (JCOEF)((z >> 1) ^ -(z & 1));
  }
  return in;
}

/* Which rows a transfer covers: jmemmgr moves whole rows. */
static long first_row(j_common_ptr cinfo, const Store *s, long offset, long count, long *rows) {
  const long row_bytes = s->blocks * (long)sizeof(JBLOCK);
  if (offset % row_bytes || count % row_bytes || offset / row_bytes + count / row_bytes > s->rows) ERREXIT(cinfo, JERR_BAD_ALLOC_CHUNK);
  *rows = count / row_bytes;
  return offset / row_bytes;
}

static void write_rows(j_common_ptr cinfo, backing_store_ptr info, void *buffer, long offset, long count) {
  Store *s = info->rows;
  long rows;
  const long first = first_row(cinfo, s, offset, count, &rows);
  const JBLOCK *block = buffer;
  for (long r = first; r < first + rows; r++) {
    uint8_t *end = s->scratch;
    for (long b = 0; b < s->blocks; b++) end = pack_block(end, *block++);
    const uint32_t size = (uint32_t)(end - s->scratch);
    if (size > s->capacity[r]) {
      /*
       * Rows grow as refinement scans add coefficients: an eighth more room, so a row moves a few times at most, but
       * never more than its blocks as they are and a byte each: the store holds at most libjpeg's array and a byte a block.
       */
      const uint32_t most = (uint32_t)s->blocks * (1 + sizeof(JBLOCK));
      const uint32_t capacity = size + size / 8 < most ? size + size / 8 : most;
      free(s->row[r]);
      s->row[r] = malloc(capacity);
      if (!s->row[r]) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 12);
      s->capacity[r] = capacity;
    }
    memcpy(s->row[r], s->scratch, size);
  }
}

static void read_rows(j_common_ptr cinfo, backing_store_ptr info, void *buffer, long offset, long count) {
  Store *s = info->rows;
  long rows;
  const long first = first_row(cinfo, s, offset, count, &rows);
  JBLOCK *block = buffer;
  for (long r = first; r < first + rows; r++) {
    if (!s->row[r]) {
      memset(block, 0, (size_t)s->blocks * sizeof(JBLOCK));
      block += s->blocks;
      continue;
    }
    const uint8_t *in = s->row[r];
    for (long b = 0; b < s->blocks; b++) in = unpack_block(in, *block++);
  }
}

static void close_rows(j_common_ptr cinfo, backing_store_ptr info) {
  (void)cinfo;
  Store *s = info->rows;
  for (long r = 0; r < s->rows; r++) free(s->row[r]);
  free(s->row);
  free(s->capacity);
  free(s->scratch);
  free(s);
  info->rows = NULL;
}

void jpeg_open_block_store(j_common_ptr cinfo, backing_store_ptr info, long rows, long blocks) {
  Store *s = calloc(1, sizeof *s);
  if (!s) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 12);
  s->rows = rows;
  s->blocks = blocks;
  s->row = calloc((size_t)rows, sizeof *s->row);
  s->capacity = calloc((size_t)rows, sizeof *s->capacity);
  s->scratch = malloc((size_t)blocks * (9 + 64 * 3));
  if (!s->row || !s->capacity || !s->scratch) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 12);
  info->rows = s;
  info->read_backing_store = read_rows;
  info->write_backing_store = write_rows;
  info->close_backing_store = close_rows;
}
