/*
 * The distinct colours of a picture, up to a palette's 256, with how often each occurs and, once the sink has ordered
 * them, each one's palette entry: an open-addressing table of twice the palette's size, so that probing stays short.
 * The palette sinks (sink_png.c, sink_webpll.c) count the colours in a first pass and index their rows through it.
 */
#ifndef PALETTE_SET_H
#define PALETTE_SET_H

#include <stdint.h>

#define PALETTE_SLOTS 512

typedef struct {
  int colours; /* distinct colours, 257 once there are more than a palette holds */
  uint32_t colour[PALETTE_SLOTS];
  uint32_t count[PALETTE_SLOTS]; /* 0: an empty slot */
  uint8_t index[PALETTE_SLOTS];  /* the colour's palette entry, set by the sink */
} PaletteSet;

/* The slot that holds `colour`, or the empty one it would take. */
static inline unsigned palette_slot(const PaletteSet *set, uint32_t colour) {
  unsigned s = (colour * 2654435761u) >> 23; /* 9 bits: PALETTE_SLOTS */
  while (set->count[s] && set->colour[s] != colour) s = (s + 1) & (PALETTE_SLOTS - 1);
  return s;
}

/* Counts `n` pixels of a colour; returns 0 once there are more than 256 colours (nothing is counted after that). */
static inline int palette_count(PaletteSet *set, uint32_t colour, uint32_t n) {
  const unsigned s = palette_slot(set, colour);
  if (!set->count[s]) {
    if (set->colours == 256) {
      set->colours = 257;
      return 0;
    }
    set->colours++;
    set->colour[s] = colour;
  }
  set->count[s] += n;
  return 1;
}

/* A counted colour's palette entry. */
static inline unsigned palette_index(const PaletteSet *set, uint32_t colour) { return set->index[palette_slot(set, colour)]; }

#endif
