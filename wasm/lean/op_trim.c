/*
 * trim=border: a sink that reads every row and finds the box of pixels that differ from the border's colour (the top
 * left pixel's) by more than `tolerance` in some channel, alpha included. An image of one colour keeps its whole box.
 */
#include <stdlib.h>
#include <string.h>

#include "lean.h"
#include "pipeline.h"

static int differs(const uint8_t *p, const uint8_t *ref, int tolerance) {
  for (int c = 0; c < 4; c++) if (abs(p[c] - ref[c]) > tolerance) return 1;
  return 0;
}

void border_box(Rows *in, int tolerance, int32_t box[4]) {
  const int width = in->width, height = in->height;
  uint8_t ref[4];
  int left = width, right = -1, top = height, bottom = -1;
  for (int y = 0; y < height; y++) {
    const uint8_t *row = in->next(in);
    if (y == 0) memcpy(ref, row, 4);
    int first = 0;
    while (first < width && !differs(row + 4 * first, ref, tolerance)) first++;
    if (first == width) continue;
    int last = width - 1;
    while (last > first && !differs(row + 4 * last, ref, tolerance)) last--;
    if (first < left) left = first;
    if (last > right) right = last;
    if (y < top) top = y;
    bottom = y;
  }
  in->close(in);
  if (right < 0) {
    box[0] = 0, box[1] = 0, box[2] = width, box[3] = height;
    return;
  }
  box[0] = left, box[1] = top, box[2] = right - left + 1, box[3] = bottom - top + 1;
}
