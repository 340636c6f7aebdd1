/* Test tool for cref_npy.h: reads IN with the expected dtype and shape and
 * writes the same data to OUT. Used by tests/python/test_npy_io.py.
 * Usage: npy_roundtrip IN OUT DESCR ITEM_SIZE [EXTENT...] */
#include "cref_npy.h"

int main(int argc, char **argv) {
  if (argc < 5 || argc - 5 > CREF_MAX_NDIM) {
    fprintf(stderr, "usage: %s IN OUT DESCR ITEM_SIZE [EXTENT...]\n", argv[0]);
    return 2;
  }
  long shape[CREF_MAX_NDIM];
  int ndim = argc - 5;
  for (int i = 0; i < ndim; i++) shape[i] = strtol(argv[5 + i], NULL, 10);
  size_t item_size = (size_t)strtoul(argv[4], NULL, 10);
  void *data = cref_npy_read(argv[1], argv[3], item_size, ndim, shape);
  cref_npy_write(argv[2], argv[3], item_size, ndim, shape, data);
  return 0;
}
