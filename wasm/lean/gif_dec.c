/*
 * The lean codec's GIF decoder: giflib reading the request body from JS, the first frame drawn on the
 * logical screen (transparent where the frame does not cover it, or where it uses its transparent
 * index), as RGBA rows.
 *
 * Why: the decoder before it (omggif, in JavaScript) made the whole canvas as RGBA, 4 B per pixel on
 * top of the file, so a 4 MP GIF to PNG did not fit the budget. Here a frame stored row by row is
 * decoded as the rows are pulled: what is held is one row of indices and one of RGBA. An interlaced
 * frame stores its rows in four passes, so its indices (1 B per pixel) are decoded once, first.
 *
 * giflib's LZW decoder bounds every prefix chain (a code used before it is defined is an error, not a
 * loop), and every read goes through gif_input_read, which stops at the end of the file: a truncated or
 * corrupt frame ends in `fail`, never in a partial image.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gif_lib.h"
#include "gif_input.h"
#include "colour.h"
#include "lean.h"
#include "pipeline.h"

/* The request body, read from JS (as png.c does) through a buffer, since giflib reads a sub-block at a time. */
__attribute__((import_module("env"), import_name("read_input"))) void js_read_input(uint8_t *out, size_t length, size_t at);

#define READ_BUFFER 65536

typedef struct {
  Rows rows;
  GifFileType *gif;
  GifInput input;
  uint8_t palette[256][4];       /* RGBA by index; indices past the colour table are opaque black */
  int left, top, frame_width, frame_height, interlaced;
  uint8_t *indices;              /* one frame row, or the whole frame when interlaced */
  uint8_t *row;                  /* the canvas row handed out */
  int y;                         /* the next canvas row */
} GifRows;

static GifRows *current;

int gif_input_read(GifFileType *gif, GifByteType *out, int length) {
  GifInput *in = (GifInput *)gif->UserData;
  int done = 0;
  while (done < length) {
    if (in->buffer_used == in->buffered) {
      size_t left = in->file_size - in->file_at;
      if (left == 0) break;
      in->buffered = left < READ_BUFFER ? left : READ_BUFFER;
      js_read_input(in->buffer, in->buffered, in->file_at);
      in->file_at += in->buffered;
      in->buffer_used = 0;
    }
    size_t n = in->buffered - in->buffer_used;
    if (n > (size_t)(length - done)) n = (size_t)(length - done);
    memcpy(out + done, in->buffer + in->buffer_used, n);
    in->buffer_used += n;
    done += (int)n;
  }
  return done;
}

void gif_input_init(GifInput *in, size_t size) {
  memset(in, 0, sizeof(GifInput));
  in->file_size = size;
  in->buffer = lean_alloc(READ_BUFFER);
}

/* giflib's reason when it has one (its messages name the defect: "Image is defective, decoding aborted"). */
__attribute__((noreturn)) void gif_fail(const GifFileType *gif, const char *what) {
  const char *reason = gif && gif->Error ? GifErrorString(gif->Error) : NULL;
  fail(reason ? reason : what);
}

int gif_palette(const ColorMapObject *map, uint8_t palette[256][4]) {
  int grey = 1;
  for (int i = 0; i < 256; i++) {
    const GifColorType c = i < map->ColorCount ? map->Colors[i] : (GifColorType){0, 0, 0};
    palette[i][0] = c.Red, palette[i][1] = c.Green, palette[i][2] = c.Blue, palette[i][3] = 255;
    if (i < map->ColorCount) grey &= c.Red == c.Green && c.Green == c.Blue;
  }
  return grey;
}

/* The transparent index of a Graphic Control Extension, or -1 (a malformed one is ignored, as browsers do). */
static int transparent_index(const GifByteType *extension) {
  GraphicsControlBlock gcb;
  if (DGifExtensionToGCB(extension[0], extension + 1, &gcb) != GIF_OK) return -1;
  return gcb.TransparentColor;
}

static void read_interlaced(GifRows *g) {
  static const int start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
  g->indices = lean_alloc((size_t)g->frame_width * g->frame_height);
  for (int pass = 0; pass < 4; pass++)
    for (int y = start[pass]; y < g->frame_height; y += step[pass])
      if (DGifGetLine(g->gif, g->indices + (size_t)y * g->frame_width, g->frame_width) != GIF_OK) gif_fail(g->gif, "the GIF's image data is corrupt");
}

static const uint8_t *gif_next(Rows *self) {
  GifRows *g = (GifRows *)self;
  const int width = self->width;
  const int frame_y = g->y - g->top;
  memset(g->row, 0, (size_t)width * 4);
  if (frame_y >= 0 && frame_y < g->frame_height) {
    const uint8_t *indices;
    if (g->interlaced) {
      if (!g->indices) read_interlaced(g);
      indices = g->indices + (size_t)frame_y * g->frame_width;
    } else {
      if (DGifGetLine(g->gif, g->indices, g->frame_width) != GIF_OK) gif_fail(g->gif, "the GIF's image data is corrupt");
      indices = g->indices;
    }
    const int from = g->left < 0 ? -g->left : 0;
    const int to = g->left + g->frame_width > width ? width - g->left : g->frame_width;
    for (int x = from; x < to; x++) memcpy(g->row + (size_t)(g->left + x) * 4, g->palette[indices[x]], 4);
  }
  g->y++;
  return g->row;
}

static void gif_close(Rows *self) {
  GifRows *g = (GifRows *)self;
  int error;
  DGifCloseFile(g->gif, &error);
  free(g->indices);
  free(g->row);
  free(g->input.buffer);
  free(g);
  current = NULL;
}

/*
 * Open a GIF of `size` bytes (read from JS as the decoder asks for it) up to its first frame, whose rows
 * then come from gif_rows. `max_width` x `max_height` is the canvas the caller checked (the header's
 * logical screen, or the first frame's size when the screen is 0x0): anything else is refused here.
 */
EXPORT(gd_open) void gd_open(size_t size, int max_width, int max_height) {
  GifRows *g = lean_alloc(sizeof(GifRows));
  memset(g, 0, sizeof(GifRows));
  current = g;
  colour_reset(); /* GIF says nothing about its colours: sRGB */
  gif_input_init(&g->input, size);
  int error = 0;
  g->gif = DGifOpen(&g->input, gif_input_read, &error);
  if (!g->gif) fail(GifErrorString(error) ? GifErrorString(error) : "not a GIF");
  int transparent = -1;
  for (;;) {
    GifRecordType type;
    if (DGifGetRecordType(g->gif, &type) != GIF_OK) gif_fail(g->gif, "the GIF ends before its first image");
    if (type == IMAGE_DESC_RECORD_TYPE) break;
    if (type != EXTENSION_RECORD_TYPE) fail("the GIF has no image");
    int code;
    GifByteType *extension;
    if (DGifGetExtension(g->gif, &code, &extension) != GIF_OK) gif_fail(g->gif, "a GIF extension is corrupt");
    if (code == GRAPHICS_EXT_FUNC_CODE && extension) transparent = transparent_index(extension);
    while (extension)
      if (DGifGetExtensionNext(g->gif, &extension) != GIF_OK) gif_fail(g->gif, "a GIF extension is corrupt");
  }
  if (DGifGetImageDesc(g->gif) != GIF_OK) gif_fail(g->gif, "the GIF's image descriptor is corrupt");
  const GifImageDesc *frame = &g->gif->Image;
  int width = g->gif->SWidth, height = g->gif->SHeight;
  g->left = frame->Left;
  g->top = frame->Top;
  if (width == 0 || height == 0) { /* no screen: the frame is the canvas */
    width = frame->Width;
    height = frame->Height;
    g->left = g->top = 0;
  }
  if (width != max_width || height != max_height) fail("the GIF's size is not the size its header gave");
  if (frame->Width <= 0 || frame->Height <= 0) fail("the GIF's first frame is empty");
  if ((uint64_t)frame->Width * frame->Height > (uint64_t)width * height) fail("the GIF's first frame is larger than its screen");
  g->frame_width = frame->Width;
  g->frame_height = frame->Height;
  g->interlaced = frame->Interlace;
  const ColorMapObject *map = frame->ColorMap ? frame->ColorMap : g->gif->SColorMap;
  if (!map) fail("the GIF's first frame has no colour table");
  const int grey = gif_palette(map, g->palette);
  if (transparent >= 0 && transparent < 256) memset(g->palette[transparent], 0, 4);
  const int covers = g->left <= 0 && g->top <= 0 && g->left + g->frame_width >= width && g->top + g->frame_height >= height;
  g->rows.width = width;
  g->rows.height = height;
  g->rows.next = gif_next;
  g->rows.close = gif_close;
  g->rows.alpha = transparent >= 0 || !covers;
  g->rows.grey = grey;
  g->row = lean_alloc((size_t)width * 4);
  if (!g->interlaced) g->indices = lean_alloc((size_t)g->frame_width);
}

/* The opened GIF's first frame on its canvas (gd_open), as a row source. */
Rows *gif_rows(void) {
  GifRows *g = current;
  if (!g) fail("no GIF is open");
  return &g->rows;
}
