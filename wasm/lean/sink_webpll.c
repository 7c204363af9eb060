/*
 * Lossless WebP (VP8L, RFC 9649) as a row sink of our own, in three passes over the same rows (JS builds the
 * pipeline again for each): libwebp's lossless encoder holds the image as ARGB several times over (25-30 B a
 * pixel), so a 5 MP screenshot did not fit the memory budget. This one holds a few rows and a window of recent
 * ones for backward references, never the image.
 *
 *  - webpll_analyse: up to 256 distinct colours (then the colour-indexing transform, pixels bundled 2, 4 or 8 to
 *    a coded pixel when there are 16 colours or fewer); it stops at the 257th.
 *  - webpll_count: the symbol stream (subtract green and a predictor chosen per block, or palette indices; then
 *    backward references within the window and colour-cache hits) counted into histograms, for several colour
 *    cache sizes at once; the predictor's modes are chosen here, a band of block rows at a time.
 *  - webpll_sink: the same symbols again, written with the length-limited (15 bits) canonical prefix codes built
 *    from those histograms, out to JS as they are made. The file's size is known before its first byte (the
 *    histograms give every symbol's length), so the RIFF header is written first.
 *
 * One prefix code group for the whole image (no entropy image), no colour transform.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lean.h"
#include "palette_set.h"
#include "pipeline.h"

__attribute__((import_module("env"), import_name("write_output"))) void js_write_output(const uint8_t *bytes, size_t length);

#define MAX_LENGTH 4096
#define LENGTH_CODES 24
#define DISTANCE_CODES 40
/* Farthest a backward reference reaches: 2^20 - 120 pixels, the largest distance code. */
#define MAX_DISTANCE ((1 << 20) - 120)
/* Block size of the predictor transform (2^bits) and the band of rows processed at once. */
#define BLOCK_BITS 5
#define BAND (1 << BLOCK_BITS)
#define HASH_BITS 16
/* Bits a literal is guessed to take until the literals seen say (Coder's `unit`): a palette index (bundled or not), a residual pixel. */
#define UNIT_PALETTE 4
#define UNIT_ARGB 10
/* Colour cache sizes tried while counting (bits; 0: no cache). */
static const int cache_tries[] = {0, 4, 6, 8, 10};
#define TRIES ((int)(sizeof cache_tries / sizeof cache_tries[0]))
#define OUT_CHUNK (1 << 16)

typedef struct {
  uint32_t green[256 + LENGTH_CODES + (1 << 10)], red[256], blue[256], alpha[256], distance[DISTANCE_CODES];
} Histogram;

/* What the passes learn, for the next. */
static struct {
  int width, height, stage; /* stage: 1 analysed, 2 counted */
  PaletteSet set;           /* the distinct ARGB values */
  uint32_t palette[256];
  int transparent;
  int cache_bits;
  uint8_t *modes; /* the predictor's mode per block */
  int blocks_x, blocks_y;
  Histogram *hist; /* one per cache size tried */
  uint64_t extra_bits; /* of lengths and distances: the same whatever the cache */
} ll;

/* A pixel as ARGB; a fully transparent one as 0, whatever its colour (as libwebp does unless told to keep it exact). */
static inline uint32_t argb_of(const uint8_t *p) { return p[3] ? (uint32_t)p[3] << 24 | (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2] : 0; }

static void forget(void) {
  free(ll.modes);
  free(ll.hist);
  memset(&ll, 0, sizeof ll);
}

/* ---------------------------------------------------------------- pass A: the colours */

/*
 * Counts the distinct ARGB values up to 257, then closes the rows. A run of one colour is looked up once.
 *
 * @example
 * webpll_analyse(rows); // then webpll_count and webpll_sink over the same rows built again
 */
void webpll_analyse(Rows *in) {
  forget();
  ll.width = in->width;
  ll.height = in->height;
  for (int y = 0; y < in->height && ll.set.colours <= 256; y++) {
    const uint8_t *row = in->next(in);
    uint32_t last = ~argb_of(row);
    for (int x = 0; x < in->width && ll.set.colours <= 256; x++) {
      const uint32_t c = argb_of(row + 4 * x);
      if (c == last) continue;
      last = c;
      palette_count(&ll.set, c, 1);
    }
  }
  in->close(in);
  if (ll.set.colours <= 256) {
    /* Ascending ARGB: neighbouring entries differ little, so the palette's deltas are cheap. */
    int n = 0;
    for (int s = 0; s < PALETTE_SLOTS; s++)
      if (ll.set.count[s]) ll.palette[n++] = ll.set.colour[s];
    for (int i = 1; i < n; i++)
      for (int j = i; j > 0 && ll.palette[j - 1] > ll.palette[j]; j--) {
        const uint32_t t = ll.palette[j];
        ll.palette[j] = ll.palette[j - 1];
        ll.palette[j - 1] = t;
      }
    for (int i = 0; i < n; i++) ll.set.index[palette_slot(&ll.set, ll.palette[i])] = (uint8_t)i;
  }
  ll.stage = 1;
}

/* ---------------------------------------------------------------- bits out */

static struct {
  uint8_t *bytes;
  size_t size, capacity, flushed; /* flushed: bytes already given to JS */
  uint64_t acc;
  int n;
  int streaming; /* bytes go to JS once the buffer holds OUT_CHUNK */
} bw;

static void bw_reserve(size_t more) {
  if (bw.size + more <= bw.capacity) return;
  size_t cap = bw.capacity ? bw.capacity : OUT_CHUNK + 64;
  while (cap < bw.size + more) cap *= 2;
  uint8_t *b = realloc(bw.bytes, cap);
  if (!b) fail("webpll: out of memory");
  bw.bytes = b;
  bw.capacity = cap;
}

static void bw_flush_bytes(void) {
  if (bw.streaming && bw.size >= OUT_CHUNK) {
    js_write_output(bw.bytes, bw.size);
    bw.flushed += bw.size;
    bw.size = 0;
  }
}

static inline void put_bits(uint32_t bits, int n) {
  bw.acc |= (uint64_t)bits << bw.n;
  bw.n += n;
  if (bw.n >= 32) {
    bw_reserve(4);
    for (int i = 0; i < 4; i++) bw.bytes[bw.size++] = (uint8_t)(bw.acc >> (8 * i));
    bw.acc >>= 32;
    bw.n -= 32;
    bw_flush_bytes();
  }
}

static uint64_t bits_written(void) { return (uint64_t)(bw.flushed + bw.size) * 8 + (uint64_t)bw.n; }

static void bw_align(void) {
  while (bw.n > 0) {
    bw_reserve(1);
    bw.bytes[bw.size++] = (uint8_t)bw.acc;
    bw.acc >>= 8;
    bw.n = bw.n > 8 ? bw.n - 8 : 0;
  }
}

/* ---------------------------------------------------------------- prefix codes */

typedef struct {
  uint8_t length[256 + LENGTH_CODES + (1 << 10)]; /* bits a symbol takes in the stream (0 for a lone symbol) */
  uint16_t code[256 + LENGTH_CODES + (1 << 10)];  /* bit-reversed, ready to be written first bit first */
  int size;
} Code;

typedef struct {
  uint32_t weight;
  int parent;
} Node;

static int by_weight(const void *a, const void *b) {
  const Node *x = a, *y = b;
  return x->weight < y->weight ? -1 : x->weight > y->weight ? 1 : 0;
}

/* Huffman code lengths of at most `limit` bits; a lone symbol gets 1 (the format's single-leaf tree). */
static void huffman_lengths(const uint32_t *count, int n, int limit, uint8_t *length) {
  memset(length, 0, (size_t)n);
  int used = 0, last = 0;
  for (int i = 0; i < n; i++)
    if (count[i]) used++, last = i;
  if (used == 0) return;
  if (used == 1) {
    length[last] = 1;
    return;
  }
  Node *node = lean_alloc(sizeof(Node) * 2 * (size_t)used);
  int *symbol = lean_alloc(sizeof(int) * (size_t)used);
  uint8_t *depth = lean_alloc((size_t)2 * used);
  for (uint32_t floor = 0;; floor = floor ? floor * 2 : 1) {
    /* Leaves sorted by weight; the symbol rides in `parent` until the tree is built. */
    int k = 0;
    for (int i = 0; i < n; i++)
      if (count[i]) node[k++] = (Node){count[i] < floor ? floor : count[i], i};
    qsort(node, (size_t)used, sizeof(Node), by_weight);
    for (int i = 0; i < used; i++) symbol[i] = node[i].parent;
    /* Two queues: leaves in order, internal nodes as they are made (their weights never decrease). */
    int leaf = 0, inner = used, made = used;
    for (int m = 0; m < used - 1; m++) {
      int pick[2];
      for (int j = 0; j < 2; j++) {
        if (leaf < used && (inner >= made || node[leaf].weight <= node[inner].weight)) pick[j] = leaf++;
        else pick[j] = inner++;
      }
      node[made] = (Node){node[pick[0]].weight + node[pick[1]].weight, -1};
      node[pick[0]].parent = made;
      node[pick[1]].parent = made;
      made++;
    }
    depth[made - 1] = 0;
    int longest = 0;
    for (int i = made - 2; i >= 0; i--) {
      depth[i] = (uint8_t)(depth[node[i].parent] + 1);
      if (i < used && depth[i] > longest) longest = depth[i];
    }
    if (longest <= limit) {
      for (int i = 0; i < used; i++) length[symbol[i]] = depth[i];
      break;
    }
  }
  free(depth);
  free(symbol);
  free(node);
}

/* Canonical codes from lengths (shorter first, then by symbol), reversed for a first-bit-first writer. */
static void canonical(Code *c, const uint8_t *length, int n) {
  int used = 0;
  for (int i = 0; i < n; i++) used += length[i] != 0;
  uint16_t count[16] = {0}, next[16] = {0};
  for (int i = 0; i < n; i++) count[length[i]]++;
  count[0] = 0;
  for (int b = 1, code = 0; b < 16; b++) {
    code = (code + count[b - 1]) << 1;
    next[b] = (uint16_t)code;
  }
  c->size = n;
  for (int i = 0; i < n; i++) {
    const int len = length[i];
    c->length[i] = (uint8_t)(used == 1 ? 0 : len);
    c->code[i] = 0;
    if (!len) continue;
    uint32_t v = next[len]++, r = 0;
    for (int b = 0; b < len; b++) r |= ((v >> b) & 1) << (len - 1 - b);
    c->code[i] = (uint16_t)r;
  }
}

static inline void put_symbol(const Code *c, int s) { put_bits(c->code[s], c->length[s]); }

static const uint8_t code_length_order[19] = {17, 18, 0, 1, 2, 3, 4, 5, 16, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* Builds the code of `count` (n symbols) and writes it: the simple form for one or two symbols below 256, else the lengths run-length coded. */
static void write_code(Code *c, const uint32_t *count, int n) {
  uint8_t length[256 + LENGTH_CODES + (1 << 10)];
  huffman_lengths(count, n, 15, length);
  canonical(c, length, n);
  int used = 0, s[2] = {0, 0};
  for (int i = 0; i < n; i++)
    if (length[i]) {
      if (used < 2) s[used] = i;
      used++;
    }
  if (used <= 2 && s[0] < 256 && s[1] < 256) {
    put_bits(1, 1);
    put_bits(used == 2, 1);
    if (s[0] < 2) {
      put_bits(0, 1);
      put_bits((uint32_t)s[0], 1);
    } else {
      put_bits(1, 1);
      put_bits((uint32_t)s[0], 8);
    }
    if (used == 2) put_bits((uint32_t)s[1], 8);
    return;
  }
  /* Tokens: 0-15 a length, 16 the last length again 3-6 times, 17 zeros 3-10 times, 18 zeros 11-138 times. */
  uint8_t *token = lean_alloc((size_t)n), *extra = lean_alloc((size_t)n);
  int tokens = 0;
  for (int i = 0; i < n;) {
    const int v = length[i];
    int run = 1;
    while (i + run < n && length[i + run] == v) run++;
    i += run;
    if (v == 0) {
      while (run >= 11) {
        const int r = run > 138 ? 138 : run;
        token[tokens] = 18, extra[tokens++] = (uint8_t)(r - 11), run -= r;
      }
      if (run >= 3) token[tokens] = 17, extra[tokens++] = (uint8_t)(run - 3), run = 0;
      while (run-- > 0) token[tokens] = 0, extra[tokens++] = 0;
      continue;
    }
    token[tokens] = (uint8_t)v, extra[tokens++] = 0, run--;
    while (run >= 3) {
      const int r = run > 6 ? 6 : run;
      token[tokens] = 16, extra[tokens++] = (uint8_t)(r - 3), run -= r;
    }
    while (run-- > 0) token[tokens] = (uint8_t)v, extra[tokens++] = 0;
  }
  uint32_t freq[19] = {0};
  for (int i = 0; i < tokens; i++) freq[token[i]]++;
  uint8_t cl_length[19];
  Code cl;
  huffman_lengths(freq, 19, 7, cl_length);
  canonical(&cl, cl_length, 19);
  int count_lengths = 19;
  while (count_lengths > 4 && !cl_length[code_length_order[count_lengths - 1]]) count_lengths--;
  put_bits(0, 1);
  put_bits((uint32_t)(count_lengths - 4), 4);
  for (int i = 0; i < count_lengths; i++) put_bits(cl_length[code_length_order[i]], 3);
  put_bits(0, 1); /* max_symbol: the whole alphabet */
  static const uint8_t extra_bits[3] = {2, 3, 7};
  for (int i = 0; i < tokens; i++) {
    put_symbol(&cl, token[i]);
    if (token[i] >= 16) put_bits(extra[i], extra_bits[token[i] - 16]);
  }
  free(extra);
  free(token);
}

/* A value of 1 or more (a length or a distance code) as a prefix symbol and extra bits. */
static inline int prefix_of(uint32_t value, int *bits, uint32_t *extra) {
  const uint32_t d = value - 1;
  if (d < 4) {
    *bits = 0;
    *extra = 0;
    return (int)d;
  }
  const int high = 31 - __builtin_clz(d);
  const int second = (d >> (high - 1)) & 1;
  *bits = high - 1;
  *extra = d & ((1u << (high - 1)) - 1);
  return 2 * high + second;
}

/* ---------------------------------------------------------------- sub-images (palette, predictor modes) */

/* An entropy-coded image of literals only: no colour cache, its own five codes. */
static void write_subimage(const uint32_t *argb, int n) {
  Histogram *h = lean_alloc(sizeof(Histogram));
  memset(h, 0, sizeof *h);
  for (int i = 0; i < n; i++) {
    h->green[(argb[i] >> 8) & 255]++;
    h->red[(argb[i] >> 16) & 255]++;
    h->blue[argb[i] & 255]++;
    h->alpha[argb[i] >> 24]++;
  }
  Code *c = lean_alloc(sizeof(Code) * 4);
  Code none;
  put_bits(0, 1);
  write_code(&c[0], h->green, 256 + LENGTH_CODES);
  write_code(&c[1], h->red, 256);
  write_code(&c[2], h->blue, 256);
  write_code(&c[3], h->alpha, 256);
  write_code(&none, h->distance, DISTANCE_CODES);
  for (int i = 0; i < n; i++) {
    put_symbol(&c[0], (argb[i] >> 8) & 255);
    put_symbol(&c[1], (argb[i] >> 16) & 255);
    put_symbol(&c[2], argb[i] & 255);
    put_symbol(&c[3], argb[i] >> 24);
  }
  free(c);
  free(h);
}

/* ---------------------------------------------------------------- prediction */

static inline uint32_t average2(uint32_t a, uint32_t b) { return (((a ^ b) & 0xfefefefeu) >> 1) + (a & b); }
static inline int channel(uint32_t c, int shift) { return (int)((c >> shift) & 255); }
static inline int clamp255(int v) { return v < 0 ? 0 : v > 255 ? 255 : v; }

static inline uint32_t select_of(uint32_t l, uint32_t t, uint32_t tl) {
  int pl = 0, pt = 0;
  for (int s = 0; s < 32; s += 8) {
    const int p = channel(l, s) + channel(t, s) - channel(tl, s);
    pl += abs(p - channel(l, s));
    pt += abs(p - channel(t, s));
  }
  return pl < pt ? l : t;
}

static inline uint32_t add_subtract_full(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t r = 0;
  for (int s = 0; s < 32; s += 8) r |= (uint32_t)clamp255(channel(a, s) + channel(b, s) - channel(c, s)) << s;
  return r;
}

static inline uint32_t add_subtract_half(uint32_t a, uint32_t b) {
  uint32_t r = 0;
  for (int s = 0; s < 32; s += 8) r |= (uint32_t)clamp255(channel(a, s) + (channel(a, s) - channel(b, s)) / 2) << s;
  return r;
}

static inline uint32_t predict(int mode, uint32_t l, uint32_t t, uint32_t tl, uint32_t tr) {
  switch (mode) {
  case 0: return 0xff000000u;
  case 1: return l;
  case 2: return t;
  case 3: return tr;
  case 4: return tl;
  case 5: return average2(average2(l, tr), t);
  case 6: return average2(l, tl);
  case 7: return average2(l, t);
  case 8: return average2(tl, t);
  case 9: return average2(t, tr);
  case 10: return average2(average2(l, tl), average2(t, tr));
  case 11: return select_of(l, t, tl);
  case 12: return add_subtract_full(l, t, tl);
  default: return add_subtract_half(average2(l, t), tl);
  }
}

static inline uint32_t residual(uint32_t c, uint32_t p) {
  return (((c | 0x00ff00ffu) - (p & 0xff00ff00u)) & 0xff00ff00u) | (((c | 0xff00ff00u) - (p & 0x00ff00ffu)) & 0x00ff00ffu);
}

/*
 * What a residual byte is guessed to cost in each channel, to choose modes by: nothing for 0, more the farther from 0.
 * (Costs learnt from the entropy of the residuals chosen so far made screenshots 2-3 % larger: a block of zero
 * residuals costs little either way, being copied from the row above or the pixel before.)
 */
static uint8_t residual_cost[256];

static void residual_costs(void) {
  for (int r = 0; r < 256; r++) {
    const int m = r < 128 ? r : 256 - r;
    int bits = 0;
    while ((1 << bits) <= m) bits++;
    residual_cost[r] = (uint8_t)(m ? 2 + 2 * bits : 0);
  }
}

/* Row `y` of the band's rows (`above`: the row before), its residuals under the block modes into `out`. */
static void residual_row(const uint32_t *row, const uint32_t *above, int y, int w, const uint8_t *modes, uint32_t *out) {
  for (int x = 0; x < w; x++) {
    uint32_t p;
    if (y == 0) p = x ? row[x - 1] : 0xff000000u;
    else if (x == 0) p = above[0];
    else p = predict(modes[x >> BLOCK_BITS], row[x - 1], above[x], above[x - 1], x + 1 < w ? above[x + 1] : row[0]);
    out[x] = residual(row[x], p);
  }
}

/* Each block of the band (rows 1..n of `band`, row 0 the one above it) gets the mode whose residuals cost least. */
static void choose_modes(uint32_t *const *band, int n, int y0, int w, uint8_t *modes) {
  for (int bx = 0; bx * BAND < w; bx++) {
    uint32_t cost[14] = {0};
    const int x0 = bx * BAND, x1 = x0 + BAND < w ? x0 + BAND : w;
    for (int r = 1; r <= n; r++) {
      if (y0 + r - 1 == 0) continue;
      const uint32_t *row = band[r], *above = band[r - 1];
      for (int x = x0 > 0 ? x0 : 1; x < x1; x++) {
        const uint32_t l = row[x - 1], t = above[x], tl = above[x - 1], tr = x + 1 < w ? above[x + 1] : row[0];
        for (int m = 0; m < 14; m++) {
          const uint32_t d = residual(row[x], predict(m, l, t, tl, tr));
          cost[m] += residual_cost[d & 255] + residual_cost[(d >> 8) & 255] + residual_cost[(d >> 16) & 255] + residual_cost[d >> 24];
        }
      }
    }
    int best = 11;
    for (int m = 0; m < 14; m++)
      if (cost[m] < cost[best]) best = m;
    modes[bx] = (uint8_t)best;
  }
}

/* ---------------------------------------------------------------- the symbol stream */

typedef struct {
  int emit;   /* 0: count into ll.hist, 1: write */
  int width;  /* coded pixels a row */
  int depth;  /* hash chain candidates looked at */
  int lazy;   /* a reference waits a pixel when the next one's saves more (effort 4 and up: 0.5-2 % smaller, 30 % more time) */
  int unit;   /* bits a literal is guessed to take, to weigh backward references against */
  uint32_t seen[4][256], literals; /* the literals so far, by channel: `unit` is their entropy, updated as they come */
  uint32_t *buf; /* the window and the band being coded, from absolute position `base` */
  int32_t *chain;
  int32_t *head;
  size_t capacity, window;
  int64_t base, fill, done, hashed;
  uint32_t *cache[TRIES];
  Code code[5];
  uint64_t extra_bits;
} Coder;

static inline uint32_t hash3(const uint32_t *p) {
  return ((p[0] * 0x9e3779b1u) ^ (p[1] * 0x85ebca77u) ^ (p[2] * 0xc2b2ae3du)) >> (32 - HASH_BITS);
}

static inline void cache_pixel(Coder *c, uint32_t argb) {
  if (c->emit) {
    if (ll.cache_bits) c->cache[0][(0x1e35a7bdu * argb) >> (32 - ll.cache_bits)] = argb;
    return;
  }
  for (int t = 0; t < TRIES; t++)
    if (c->cache[t]) c->cache[t][(0x1e35a7bdu * argb) >> (32 - cache_tries[t])] = argb;
}

/* `unit` from the literals so far (the same in both passes: the same symbols come in the same order). */
static void learn(Coder *c, uint32_t argb) {
  for (int k = 0; k < 4; k++) c->seen[k][(argb >> (8 * k)) & 255]++;
  if (++c->literals & 0x3fff) return;
  double bits = 0;
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 256; i++)
      if (c->seen[k][i]) bits -= c->seen[k][i] * log2((double)c->seen[k][i] / c->literals);
  c->unit = (int)(bits / c->literals + 0.5);
  if (c->unit < 1) c->unit = 1;
}

static void literal(Coder *c, uint32_t argb) {
  learn(c, argb);
  if (c->emit) {
    const int t = ll.cache_bits;
    if (t) {
      const uint32_t key = (0x1e35a7bdu * argb) >> (32 - t);
      if (c->cache[0][key] == argb) {
        put_symbol(&c->code[0], 256 + LENGTH_CODES + (int)key);
        return;
      }
      c->cache[0][key] = argb;
    }
    put_symbol(&c->code[0], (argb >> 8) & 255);
    put_symbol(&c->code[1], (argb >> 16) & 255);
    put_symbol(&c->code[2], argb & 255);
    put_symbol(&c->code[3], argb >> 24);
    return;
  }
  for (int t = 0; t < TRIES; t++) {
    Histogram *h = &ll.hist[t];
    if (c->cache[t]) {
      const uint32_t key = (0x1e35a7bdu * argb) >> (32 - cache_tries[t]);
      if (c->cache[t][key] == argb) {
        h->green[256 + LENGTH_CODES + key]++;
        continue;
      }
      c->cache[t][key] = argb;
    }
    h->green[(argb >> 8) & 255]++;
    h->red[(argb >> 16) & 255]++;
    h->blue[argb & 255]++;
    h->alpha[argb >> 24]++;
  }
}

/* The distance code of a distance: one of the 120 short codes for a pixel near above or to the left, else distance + 120. */
static uint8_t short_code[8][17]; /* [dy][dx + 8] -> code 1..120 */

static void short_codes(void) {
  static const int8_t map[240] = {
    0, 1, 1, 0, 1, 1, -1, 1, 0, 2, 2, 0, 1, 2, -1, 2, 2, 1, -2, 1, 2, 2, -2, 2, 0, 3, 3, 0, 1, 3, -1, 3, 3, 1, -3, 1,
    2, 3, -2, 3, 3, 2, -3, 2, 0, 4, 4, 0, 1, 4, -1, 4, 4, 1, -4, 1, 3, 3, -3, 3, 2, 4, -2, 4, 4, 2, -4, 2, 0, 5,
    3, 4, -3, 4, 4, 3, -4, 3, 5, 0, 1, 5, -1, 5, 5, 1, -5, 1, 2, 5, -2, 5, 5, 2, -5, 2, 4, 4, -4, 4, 3, 5, -3, 5,
    5, 3, -5, 3, 0, 6, 6, 0, 1, 6, -1, 6, 6, 1, -6, 1, 2, 6, -2, 6, 6, 2, -6, 2, 4, 5, -4, 5, 5, 4, -5, 4, 3, 6,
    -3, 6, 6, 3, -6, 3, 0, 7, 7, 0, 1, 7, -1, 7, 5, 5, -5, 5, 7, 1, -7, 1, 4, 6, -4, 6, 6, 4, -6, 4, 2, 7, -2, 7,
    7, 2, -7, 2, 3, 7, -3, 7, 7, 3, -7, 3, 5, 6, -5, 6, 6, 5, -6, 5, 8, 0, 4, 7, -4, 7, 7, 4, -7, 4, 8, 1, 8, 2,
    6, 6, -6, 6, 8, 3, 5, 7, -5, 7, 7, 5, -7, 5, 8, 4, 6, 7, -6, 7, 7, 6, -7, 6, 8, 5, 7, 7, -7, 7, 8, 6, 8, 7};
  for (int i = 0; i < 120; i++) short_code[map[2 * i + 1]][map[2 * i] + 8] = (uint8_t)(i + 1);
}

static inline uint32_t distance_code(int64_t distance, int width) {
  const int64_t dy = distance / width, dx = distance - dy * width;
  if (dx <= 8 && dy < 8 && short_code[dy][dx + 8]) return short_code[dy][dx + 8];
  if (dx > width - 8 && dy < 7 && short_code[dy + 1][dx - width + 8]) return short_code[dy + 1][dx - width + 8];
  return (uint32_t)distance + 120;
}

static void copy(Coder *c, int length, int64_t distance) {
  int lbits, dbits;
  uint32_t lextra, dextra;
  const int ls = prefix_of((uint32_t)length, &lbits, &lextra);
  const int ds = prefix_of(distance_code(distance, c->width), &dbits, &dextra);
  if (c->emit) {
    put_symbol(&c->code[0], 256 + ls);
    put_bits(lextra, lbits);
    put_symbol(&c->code[4], ds);
    put_bits(dextra, dbits);
  } else {
    for (int t = 0; t < TRIES; t++) {
      ll.hist[t].green[256 + ls]++;
      ll.hist[t].distance[ds]++;
    }
    c->extra_bits += (uint64_t)(lbits + dbits);
  }
  const uint32_t *from = c->buf + (c->done - c->base);
  for (int i = 0; i < length; i++) cache_pixel(c, from[i]);
}

/* About the bits a backward reference takes: its two prefix symbols (guessed at 4 bits each) and their extra bits. */
static inline int copy_bits(int length, int64_t distance, int width) {
  int lbits, dbits;
  uint32_t extra;
  prefix_of((uint32_t)length, &lbits, &extra);
  prefix_of(distance_code(distance, width), &dbits, &extra);
  return 8 + lbits + dbits;
}

static inline int match_length(const uint32_t *a, const uint32_t *b, int most) {
  int n = 0;
  while (n < most && a[n] == b[n]) n++;
  return n;
}

/* Puts positions up to `end` (exclusive) into the hash chains, each with the two pixels after it. */
static void hash_to(Coder *c, int64_t end) {
  const int64_t last = c->base + c->fill - 2;
  if (end > last) end = last;
  for (; c->hashed < end; c->hashed++) {
    const int64_t at = c->hashed - c->base;
    const uint32_t h = hash3(c->buf + at);
    c->chain[at] = c->head[h];
    c->head[h] = (int32_t)c->hashed;
  }
}

/* The best backward reference at `p` (length and distance): each candidate weighed by what it saves over literals (its pixels at `unit` bits, less its own symbols and extra bits); returns that saving (0: none saves). */
static int find_match(Coder *c, int64_t p, int64_t end, int *length, int64_t *distance) {
  const uint32_t *here = c->buf + (p - c->base);
  const int most = end - p < MAX_LENGTH ? (int)(end - p) : MAX_LENGTH;
  int best = 0, gain = 0;
#define CONSIDER(n, d) \
  do { \
    const int g = (n) * c->unit - copy_bits((n), (d), c->width); \
    if (g > gain) gain = g, best = (n), *distance = (d); \
  } while (0)
  if (p - 1 >= c->base) CONSIDER(match_length(here, here - 1, most), 1);
  if (best < most && p - c->width >= c->base) CONSIDER(match_length(here, here - c->width, most), c->width);
  hash_to(c, p);
  if (best < most && p + 2 < end) {
    int32_t cand = c->head[hash3(here)];
    for (int k = 0; k < c->depth && cand >= c->base && p - cand <= (int64_t)c->window; k++) {
      const uint32_t *there = c->buf + (cand - c->base);
      if (there[best] == here[best]) {
        const int n = match_length(here, there, most);
        if (n >= best) CONSIDER(n, p - cand);
        if (best == most) break;
      }
      const int32_t next = c->chain[cand - c->base];
      if (next >= cand) break;
      cand = next;
    }
  }
#undef CONSIDER
  *length = best;
  return gain;
}

/* Codes every pixel in the buffer not coded yet: a backward reference where one saves bits (unless the next pixel's saves more than a literal costs), else a literal. */
static void code_pending(Coder *c) {
  const int64_t end = c->base + c->fill;
  int length = 0, next_length;
  int64_t distance = 0, next_distance;
  int gain = -1;
  while (c->done < end) {
    const int64_t p = c->done;
    if (gain < 0) gain = find_match(c, p, end, &length, &distance);
    if (gain > 0 && c->lazy && p + 1 < end) {
      const int next_gain = find_match(c, p + 1, end, &next_length, &next_distance);
      if (next_gain > gain + c->unit) {
        literal(c, c->buf[p - c->base]);
        c->done++;
        gain = next_gain, length = next_length, distance = next_distance;
        continue;
      }
    }
    if (gain > 0) {
      copy(c, length, distance);
      c->done += length;
    } else {
      literal(c, c->buf[p - c->base]);
      c->done++;
    }
    gain = -1;
  }
}

/* Room for `pixels` more in the buffer: what is coded slides down, keeping the window. */
static uint32_t *buffer_rows(Coder *c, int64_t pixels) {
  if (c->fill + pixels > (int64_t)c->capacity) {
    int64_t keep = (int64_t)c->window < c->fill ? (int64_t)c->window : c->fill;
    const int64_t drop = c->fill - keep;
    memmove(c->buf, c->buf + drop, sizeof(uint32_t) * (size_t)keep);
    memmove(c->chain, c->chain + drop, sizeof(int32_t) * (size_t)keep);
    c->base += drop;
    c->fill = keep;
  }
  uint32_t *at = c->buf + c->fill;
  c->fill += pixels;
  return at;
}

static inline uint32_t index_of(uint32_t argb) { return palette_index(&ll.set, argb); }

static int bundle_bits(int colours) { return colours <= 2 ? 3 : colours <= 4 ? 2 : colours <= 16 ? 1 : 0; }

/* Both later passes: every row through the transforms into the coder. */
static void run(Rows *in, Coder *c) {
  const int w = in->width, h = in->height, palette = ll.set.colours <= 256;
  const int xbits = palette ? bundle_bits(ll.set.colours) : 0;
  const int cw = (w + (1 << xbits) - 1) >> xbits;
  c->width = cw;
  c->unit = palette ? UNIT_PALETTE : UNIT_ARGB;
  c->window = MAX_DISTANCE;
  /* The window: as far as a distance reaches (2^20 - 120 coded pixels: 8 MiB with its chains; 256 K made screenshots
     12-15 % larger, their lines of text repeating farther apart), or the whole image when smaller; and a band. */
  if ((size_t)h * cw < c->window) c->window = (size_t)h * cw;
  c->capacity = c->window + (size_t)BAND * cw;
  c->buf = lean_alloc(sizeof(uint32_t) * c->capacity);
  c->chain = lean_alloc(sizeof(int32_t) * c->capacity);
  c->head = lean_alloc(sizeof(int32_t) << HASH_BITS);
  for (int i = 0; i < 1 << HASH_BITS; i++) c->head[i] = -1;
  uint32_t *band_block = NULL, *band[BAND + 1];
  if (!palette) {
    band_block = lean_alloc(sizeof(uint32_t) * (size_t)w * (BAND + 1));
    for (int r = 0; r <= BAND; r++) band[r] = band_block + (size_t)r * w;
  }
  for (int y0 = 0; y0 < h; y0 += BAND) {
    const int n = h - y0 < BAND ? h - y0 : BAND;
    uint32_t *out = buffer_rows(c, (int64_t)n * cw);
    if (palette) {
      for (int r = 0; r < n; r++, out += cw) {
        const uint8_t *row = in->next(in);
        memset(out, 0, sizeof(uint32_t) * (size_t)cw);
        uint32_t last = ~argb_of(row), index = 0;
        for (int x = 0; x < w; x++) {
          const uint32_t argb = argb_of(row + 4 * x);
          if (argb != last) last = argb, index = index_of(argb);
          out[x >> xbits] |= index << (((x & ((1 << xbits) - 1)) << 3) >> xbits);
        }
        for (int x = 0; x < cw; x++) out[x] = 0xff000000u | out[x] << 8;
      }
    } else {
      memcpy(band[0], band[BAND], sizeof(uint32_t) * (size_t)w);
      for (int r = 1; r <= n; r++) {
        const uint8_t *row = in->next(in);
        for (int x = 0; x < w; x++) {
          const uint32_t argb = argb_of(row + 4 * x);
          const uint32_t g = (argb >> 8) & 255;
          band[r][x] = (argb & 0xff00ff00u) | (((argb >> 16) - g) & 255) << 16 | ((argb - g) & 255);
          if (argb < 0xff000000u) ll.transparent = 1;
        }
      }
      uint8_t *modes = ll.modes + (size_t)(y0 >> BLOCK_BITS) * ll.blocks_x;
      if (!c->emit) choose_modes(band, n, y0, w, modes);
      for (int r = 1; r <= n; r++, out += cw) residual_row(band[r], band[r - 1], y0 + r - 1, w, modes, out);
      if (n < BAND) memcpy(band[BAND], band[n], sizeof(uint32_t) * (size_t)w);
    }
    code_pending(c);
  }
  free(band_block);
  free(c->head);
  free(c->chain);
  free(c->buf);
  in->close(in);
}

static int depth_of(int effort) {
  static const uint8_t depths[10] = {1, 2, 4, 6, 8, 12, 16, 24, 32, 48};
  return depths[effort < 0 ? 0 : effort > 9 ? 9 : effort];
}

/*
 * Second pass: the symbols counted, for every colour cache size tried; the predictor's modes chosen.
 *
 * @example
 * webpll_count(rows, 4);
 */
void webpll_count(Rows *in, int effort) {
  if (ll.stage != 1 || ll.width != in->width || ll.height != in->height) fail("webpll_count: the rows were not analysed");
  residual_costs();
  short_codes();
  if (ll.set.colours <= 256) {
    for (int i = 0; i < 256; i++)
      if (ll.palette[i] < 0xff000000u && i < ll.set.colours) ll.transparent = 1;
  } else {
    ll.blocks_x = (in->width + BAND - 1) >> BLOCK_BITS;
    ll.blocks_y = (in->height + BAND - 1) >> BLOCK_BITS;
    ll.modes = lean_alloc((size_t)ll.blocks_x * ll.blocks_y);
  }
  ll.hist = lean_alloc(sizeof(Histogram) * TRIES);
  memset(ll.hist, 0, sizeof(Histogram) * TRIES);
  Coder c = {0};
  c.depth = depth_of(effort);
  c.lazy = effort >= 4;
  for (int t = 0; t < TRIES; t++)
    if (cache_tries[t]) {
      c.cache[t] = lean_alloc(sizeof(uint32_t) << cache_tries[t]);
      memset(c.cache[t], 0, sizeof(uint32_t) << cache_tries[t]);
    }
  run(in, &c);
  for (int t = 0; t < TRIES; t++) free(c.cache[t]);
  ll.extra_bits = c.extra_bits;
  ll.stage = 2;
}

static int green_size(int cache_bits) { return 256 + LENGTH_CODES + (cache_bits ? 1 << cache_bits : 0); }

/* Bits of the symbols `h` counts under their own codes (the codes' own bits left out: a few hundred bytes). */
static uint64_t cost_of(const Histogram *h, int cache_bits) {
  uint8_t length[256 + LENGTH_CODES + (1 << 10)];
  uint64_t bits = 0;
  const uint32_t *counts[5] = {h->green, h->red, h->blue, h->alpha, h->distance};
  const int sizes[5] = {green_size(cache_bits), 256, 256, 256, DISTANCE_CODES};
  for (int k = 0; k < 5; k++) {
    huffman_lengths(counts[k], sizes[k], 15, length);
    int used = 0;
    for (int i = 0; i < sizes[k]; i++) used += length[i] != 0;
    if (used > 1)
      for (int i = 0; i < sizes[k]; i++) bits += (uint64_t)counts[k][i] * length[i];
    bits += 8 * (uint64_t)used / 2 + 16;
  }
  return bits;
}

static void put_le32(uint8_t *at, uint32_t v) {
  for (int i = 0; i < 4; i++) at[i] = (uint8_t)(v >> (8 * i));
}

/*
 * Third pass: the same symbols, written. Returns the file's size; the file went out to JS (`write_output`).
 *
 * @example
 * const size_t bytes = webpll_sink(rows, 4);
 */
size_t webpll_sink(Rows *in, int effort) {
  if (ll.stage != 2 || ll.width != in->width || ll.height != in->height) fail("webpll_sink: the rows were not counted");
  const int w = in->width, h = in->height;
  if (w > 16384 || h > 16384) fail("webpll_sink: lossless WebP is at most 16384 pixels a side");
  int best = 0;
  uint64_t least = UINT64_MAX;
  for (int t = 0; t < TRIES; t++) {
    const uint64_t cost = cost_of(&ll.hist[t], cache_tries[t]);
    if (cost < least) least = cost, best = t;
  }
  ll.cache_bits = cache_tries[best];
  const Histogram *hist = &ll.hist[best];

  memset(&bw, 0, sizeof bw);
  bw_reserve(21);
  memcpy(bw.bytes, "RIFF\0\0\0\0WEBPVP8L\0\0\0\0\x2f", 21);
  bw.size = 21;
  put_bits((uint32_t)(w - 1), 14);
  put_bits((uint32_t)(h - 1), 14);
  put_bits((uint32_t)ll.transparent, 1);
  put_bits(0, 3);
  if (ll.set.colours <= 256) {
    put_bits(1, 1);
    put_bits(3, 2);
    put_bits((uint32_t)(ll.set.colours - 1), 8);
    uint32_t delta[256];
    for (int i = 0; i < ll.set.colours; i++) delta[i] = i ? residual(ll.palette[i], ll.palette[i - 1]) : ll.palette[0];
    write_subimage(delta, ll.set.colours);
  } else {
    put_bits(1, 1);
    put_bits(2, 2); /* subtract green */
    put_bits(1, 1);
    put_bits(0, 2); /* predictor */
    put_bits(BLOCK_BITS - 2, 3);
    const int blocks = ll.blocks_x * ll.blocks_y;
    uint32_t *modes = lean_alloc(sizeof(uint32_t) * (size_t)blocks);
    for (int i = 0; i < blocks; i++) modes[i] = 0xff000000u | (uint32_t)ll.modes[i] << 8;
    write_subimage(modes, blocks);
    free(modes);
  }
  put_bits(0, 1);
  if (ll.cache_bits) {
    put_bits(1, 1);
    put_bits((uint32_t)ll.cache_bits, 4);
  } else {
    put_bits(0, 1);
  }
  put_bits(0, 1); /* one prefix code group */
  Coder c = {0};
  c.emit = 1;
  c.depth = depth_of(effort);
  c.lazy = effort >= 4;
  write_code(&c.code[0], hist->green, green_size(ll.cache_bits));
  write_code(&c.code[1], hist->red, 256);
  write_code(&c.code[2], hist->blue, 256);
  write_code(&c.code[3], hist->alpha, 256);
  write_code(&c.code[4], hist->distance, DISTANCE_CODES);

  /* Every symbol's length is known now, so the file's size is. */
  uint64_t bits = bits_written() - 8 * 21 + ll.extra_bits;
  const uint32_t *counts[5] = {hist->green, hist->red, hist->blue, hist->alpha, hist->distance};
  for (int k = 0; k < 5; k++)
    for (int i = 0; i < c.code[k].size; i++) bits += (uint64_t)counts[k][i] * c.code[k].length[i];
  const uint64_t chunk = 1 + (bits + 7) / 8;
  if (chunk > 0xfffffff0u) fail("webpll_sink: the file would be over 4 GiB");
  put_le32(bw.bytes + 4, (uint32_t)(4 + 8 + chunk + (chunk & 1)));
  put_le32(bw.bytes + 16, (uint32_t)chunk);
  bw.streaming = 1;
  bw_flush_bytes();

  if (ll.cache_bits) {
    c.cache[0] = lean_alloc(sizeof(uint32_t) << ll.cache_bits);
    memset(c.cache[0], 0, sizeof(uint32_t) << ll.cache_bits);
  }
  run(in, &c);
  free(c.cache[0]);
  bw_align();
  if (chunk & 1) {
    bw_reserve(1);
    bw.bytes[bw.size++] = 0;
  }
  const size_t total = bw.flushed + bw.size;
  if (total != 20 + chunk + (chunk & 1)) fail("webpll_sink: the stream's size differs from its count");
  js_write_output(bw.bytes, bw.size);
  free(bw.bytes);
  memset(&bw, 0, sizeof bw);
  forget();
  return total;
}
