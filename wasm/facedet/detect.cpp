// The module's exports: faces found in a BGR image (libfacedetection's CNN), and the heap the caller writes into.
#include <stdint.h>
#include <stdlib.h>
#include "facedetectcnn.h"

static unsigned char results[FACEDETECTION_RESULT_BUFFER_SIZE];

extern "C" {

// Finds faces in `width` x `height` BGR pixels; writes x, y, width, height and confidence (0-100) of each into
// `out` (room for `room` faces) and returns how many it found (-1 where the CNN failed).
__attribute__((export_name("faces_detect")))
int faces_detect(const uint8_t *bgr, int width, int height, int32_t *out, int room) {
  int *found = facedetect_cnn(results, (unsigned char *)bgr, width, height, width * 3);
  if (!found) return -1;
  int n = found[0] < room ? found[0] : room;
  for (int i = 0; i < n; i++) {
    const short *face = (const short *)(found + 1) + FACEDETECTION_RESULT_STRIDE_SHORTS * i;
    out[i * 5 + 0] = face[1];
    out[i * 5 + 1] = face[2];
    out[i * 5 + 2] = face[3];
    out[i * 5 + 3] = face[4];
    out[i * 5 + 4] = face[0];
  }
  return n;
}

__attribute__((export_name("faces_alloc")))
void *faces_alloc(int size) { return malloc(size); }

__attribute__((export_name("faces_free")))
void faces_free(void *p) { free(p); }

}
