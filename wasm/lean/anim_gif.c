/*
 * Every frame of a GIF, composited on its logical screen as browsers show it: the canvas starts transparent;
 * a frame's pixels replace the canvas's except where it uses its transparent index; before the next frame, the
 * frame's rectangle is left (disposal 0-1), cleared to transparent (2, "background": browsers ignore the
 * background colour) or restored to what it was before the frame (3, and 4, which browsers take as 3). A delay of 10
 * ms or less shows for 100 ms, as browsers play it. A file that ends (or holds bytes that are not a block) between
 * frames ends the animation there, as browsers and the header walk take it; one that ends inside a frame is refused.
 * A 0-sized logical screen is the first frame's rectangle (every frame placed relative to it), as the header says.
 *
 * Held: the canvas (4 B per pixel), for disposal 3 a copy of the frame's rectangle, and one row of indices; a frame's
 * rows are written onto the canvas as giflib decodes them (an interlaced frame's in its pass order). A frame outside
 * the screen is refused, as is a truncated or corrupt one (giflib's own checks; see gif_dec.c).
 */
#include <stdlib.h>
#include <string.h>

#include "gif_lib.h"
#include "colour.h"
#include "frames.h"
#include "gif_input.h"
#include "lean.h"

typedef struct {
  Frames frames;
  GifFileType *gif;
  GifInput input;
  uint8_t *canvas;
  uint8_t *line;  /* one row of a frame's indices */
  uint8_t *saved; /* the rectangle under the last frame, for its disposal 3 */
  int dispose, left, top, frame_width, frame_height; /* the last frame's disposal and rectangle */
  int zero_screen, origin_left, origin_top, drawn;   /* a 0-sized screen: the canvas is the first frame's rectangle; frames drawn */
} GifFrames;

static void copy_rect(uint8_t *to, size_t to_stride, const uint8_t *from, size_t from_stride, int width, int height) {
  for (int y = 0; y < height; y++) memcpy(to + (size_t)y * to_stride, from + (size_t)y * from_stride, (size_t)width * 4);
}

/* The last frame's disposal, before the next is drawn. */
static void dispose(GifFrames *g) {
  const size_t stride = (size_t)g->frames.width * 4;
  uint8_t *origin = g->canvas + (size_t)g->top * stride + (size_t)g->left * 4;
  if (g->dispose == DISPOSE_BACKGROUND) {
    for (int y = 0; y < g->frame_height; y++) memset(origin + (size_t)y * stride, 0, (size_t)g->frame_width * 4);
  } else if (g->dispose == DISPOSE_PREVIOUS && g->saved) {
    copy_rect(origin, stride, g->saved, (size_t)g->frame_width * 4, g->frame_width, g->frame_height);
  }
  free(g->saved);
  g->saved = NULL;
  g->dispose = 0;
}

static void draw(GifFrames *g, int transparent) {
  const GifImageDesc *frame = &g->gif->Image;
  const int width = g->frames.width, height = g->frames.height;
  if (frame->Width <= 0 || frame->Height <= 0) fail("a GIF frame is empty");
  const left = frame->Left - g->origin_left, top = frame->Top - g->origin_top;
  if (left < 0 || top < 0 || left + frame->Width > width || top + frame->Height > height) fail("a GIF frame lies outside its logical screen");
  const ColorMapObject *map = frame->ColorMap ? frame->ColorMap : g->gif->SColorMap;
  if (!map) fail("a GIF frame has no colour table");
  uint8_t palette[256][4];
  gif_palette(map, palette);
  const size_t stride = (size_t)width * 4;
  g->left = left, g->top = top, g->frame_width = frame->Width, g->frame_height = frame->Height;
  uint8_t *origin = g->canvas + (size_t)g->top * stride + (size_t)g->left * 4;
  if (g->dispose == DISPOSE_PREVIOUS) {
    g->saved = lean_alloc((size_t)g->frame_width * g->frame_height * 4);
    copy_rect(g->saved, (size_t)g->frame_width * 4, origin, stride, g->frame_width, g->frame_height);
  }
  static const int start[4] = {0, 4, 2, 1}, step[4] = {8, 8, 4, 2};
  const int passes = frame->Interlace ? 4 : 1;
  for (int pass = 0; pass < passes; pass++) {
    for (int y = frame->Interlace ? start[pass] : 0; y < g->frame_height; y += frame->Interlace ? step[pass] : 1) {
      if (DGifGetLine(g->gif, g->line, g->frame_width) != GIF_OK) gif_fail(g->gif, "a GIF frame's image data is corrupt");
      uint8_t *out = origin + (size_t)y * stride;
      for (int x = 0; x < g->frame_width; x++)
        if (g->line[x] != transparent) memcpy(out + (size_t)x * 4, palette[g->line[x]], 4);
    }
  }
}

static const uint8_t *gif_frames_next(Frames *self, int *duration_ms) {
  GifFrames *g = (GifFrames *)self;
  GraphicsControlBlock control = {.DisposalMode = 0, .DelayTime = 0, .TransparentColor = NO_TRANSPARENT_COLOR};
  for (;;) {
    GifRecordType type;
    if (DGifGetRecordType(g->gif, &type) != GIF_OK) {
      if (g->drawn > 0) return NULL;
      gif_fail(g->gif, "the GIF ends before its first frame");
    }
    if (type == TERMINATE_RECORD_TYPE) return NULL;
    if (type == EXTENSION_RECORD_TYPE) {
      int code;
      GifByteType *extension;
      if (DGifGetExtension(g->gif, &code, &extension) != GIF_OK) {
        if (g->drawn > 0) return NULL;
        gif_fail(g->gif, "a GIF extension is corrupt");
      }
      /* a malformed Graphic Control Extension is ignored, as browsers do */
      if (code == GRAPHICS_EXT_FUNC_CODE && extension && DGifExtensionToGCB(extension[0], extension + 1, &control) != GIF_OK) {
        control = (GraphicsControlBlock){.DisposalMode = 0, .DelayTime = 0, .TransparentColor = NO_TRANSPARENT_COLOR};
      }
      while (extension) {
        if (DGifGetExtensionNext(g->gif, &extension) == GIF_OK) continue;
        if (g->drawn > 0) return NULL;
        gif_fail(g->gif, "a GIF extension is corrupt");
      }
      continue;
    }
    if (type != IMAGE_DESC_RECORD_TYPE) {
      if (g->drawn > 0) return NULL;
      fail("the GIF has a record of an unknown type");
    }
    if (DGifGetImageDesc(g->gif) != GIF_OK) gif_fail(g->gif, "a GIF image descriptor is corrupt");
    if (g->drawn == 0 && g->zero_screen) g->origin_left = g->gif->Image.Left, g->origin_top = g->gif->Image.Top;
    dispose(g);
    g->dispose = control.DisposalMode == 4 ? DISPOSE_PREVIOUS : control.DisposalMode;
    draw(g, control.TransparentColor);
    *duration_ms = control.DelayTime <= 1 ? 100 : control.DelayTime * 10;
    g->drawn++;
    return g->canvas;
  }
}

static void gif_frames_close(Frames *self) {
  GifFrames *g = (GifFrames *)self;
  int error;
  DGifCloseFile(g->gif, &error);
  free(g->canvas);
  free(g->line);
  free(g->saved);
  free(g->input.buffer);
  free(g);
}

/*
 * A GIF of `size` bytes, read from JS as giflib asks for it, whose logical screen the caller checked is `width` x `height`
 * (a 0x0 screen, where the header gave the first frame's size, is that size).
 */
Frames *gif_frames(size_t size, int width, int height) {
  GifFrames *g = lean_alloc(sizeof(GifFrames));
  memset(g, 0, sizeof(GifFrames));
  colour_reset(); /* GIF says nothing about its colours: sRGB */
  gif_input_init(&g->input, size);
  int error = 0;
  g->gif = DGifOpen(&g->input, gif_input_read, &error);
  if (!g->gif) fail(GifErrorString(error) ? GifErrorString(error) : "not a GIF");
  g->zero_screen = g->gif->SWidth == 0 || g->gif->SHeight == 0;
  if (!g->zero_screen && (g->gif->SWidth != width || g->gif->SHeight != height)) fail("the GIF's size is not the size its header gave");
  g->frames.width = width;
  g->frames.height = height;
  g->frames.next = gif_frames_next;
  g->frames.close = gif_frames_close;
  g->canvas = lean_alloc((size_t)width * height * 4);
  memset(g->canvas, 0, (size_t)width * height * 4);
  g->line = lean_alloc((size_t)width);
  return &g->frames;
}
