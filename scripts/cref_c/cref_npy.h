/* .npy reader and writer for the C reference driver (scripts/cref.py).
 *
 * Reads NumPy format versions 1.0, 2.0 and 3.0 (little-endian, C order) and
 * writes version 1.0. Every failure prints one "cref: error: ..." line and
 * exits with status 2, so the Python side can report it without a traceback.
 * Functions are static: the header is included into each generated main. */
#ifndef CREF_NPY_H
#define CREF_NPY_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CREF_MAX_NDIM 8

static void cref_fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("cref: error: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  exit(2);
}

static void *cref_alloc(size_t bytes) {
  /* 64-byte alignment keeps vectorised kernels on their fast path; at least
   * one byte so 0-element arrays still get a valid pointer. */
  size_t rounded = ((bytes ? bytes : 1) + 63) / 64 * 64;
  void *memory = aligned_alloc(64, rounded);
  if (memory == NULL) cref_fail("out of memory allocating %zu bytes", bytes);
  memset(memory, 0, rounded);
  return memory;
}

/* The dtype descriptor must name the expected item type: numpy writes '<'
 * for multi-byte little-endian types and '|' for single bytes; '=' (native)
 * is accepted too since the driver only runs on little-endian hosts. */
static int cref_descr_matches(const char *found, const char *expected) {
  if (strcmp(found, expected) == 0) return 1;
  if ((found[0] == '<' || found[0] == '|' || found[0] == '=') &&
      (expected[0] == '<' || expected[0] == '|'))
    return strcmp(found + 1, expected + 1) == 0;
  return 0;
}

/* Finds `key` (quoted with ' or ") in the header dict and returns a pointer to
 * the first non-space character after its colon, or NULL. */
static const char *cref_header_value(const char *header, const char *key) {
  size_t key_len = strlen(key);
  for (const char *p = header; *p; p++) {
    if ((*p == '\'' || *p == '"') && strncmp(p + 1, key, key_len) == 0 &&
        p[1 + key_len] == *p) {
      const char *q = p + 2 + key_len;
      while (*q == ' ') q++;
      if (*q != ':') return NULL;
      q++;
      while (*q == ' ') q++;
      return q;
    }
  }
  return NULL;
}

/* Reads `path` into a fresh buffer after checking that its dtype is
 * `descr` and its shape is exactly shape[0..ndim). */
static void *cref_npy_read(const char *path, const char *descr, size_t item_size, int ndim,
                           const long *shape) {
  FILE *file = fopen(path, "rb");
  if (file == NULL) cref_fail("%s: cannot open input file", path);
  unsigned char preamble[8];
  if (fread(preamble, 1, 8, file) != 8 || memcmp(preamble, "\x93NUMPY", 6) != 0)
    cref_fail("%s: not a .npy file (bad magic)", path);
  size_t header_len;
  if (preamble[6] == 1) {
    unsigned char len_bytes[2];
    if (fread(len_bytes, 1, 2, file) != 2) cref_fail("%s: truncated .npy header", path);
    header_len = (size_t)len_bytes[0] | ((size_t)len_bytes[1] << 8);
  } else if (preamble[6] == 2 || preamble[6] == 3) {
    unsigned char len_bytes[4];
    if (fread(len_bytes, 1, 4, file) != 4) cref_fail("%s: truncated .npy header", path);
    header_len = (size_t)len_bytes[0] | ((size_t)len_bytes[1] << 8) |
                 ((size_t)len_bytes[2] << 16) | ((size_t)len_bytes[3] << 24);
  } else {
    cref_fail("%s: unsupported .npy format version %d.%d", path, preamble[6], preamble[7]);
    return NULL;
  }
  if (header_len > (1u << 20)) cref_fail("%s: .npy header too long", path);
  char *header = cref_alloc(header_len + 1);
  if (fread(header, 1, header_len, file) != header_len)
    cref_fail("%s: truncated .npy header", path);
  header[header_len] = '\0';

  const char *descr_value = cref_header_value(header, "descr");
  if (descr_value == NULL || (*descr_value != '\'' && *descr_value != '"'))
    cref_fail("%s: .npy header has no dtype ('descr')", path);
  char found_descr[32];
  size_t d = 0;
  for (const char *p = descr_value + 1; *p && *p != *descr_value; p++)
    if (d + 1 < sizeof found_descr) found_descr[d++] = *p;
  found_descr[d] = '\0';
  if (!cref_descr_matches(found_descr, descr))
    cref_fail("%s: dtype is '%s' but the kernel expects '%s'", path, found_descr, descr);

  const char *order_value = cref_header_value(header, "fortran_order");
  if (order_value == NULL) cref_fail("%s: .npy header has no 'fortran_order'", path);
  int fortran = strncmp(order_value, "True", 4) == 0;

  const char *shape_value = cref_header_value(header, "shape");
  if (shape_value == NULL || *shape_value != '(')
    cref_fail("%s: .npy header has no 'shape'", path);
  long found_shape[CREF_MAX_NDIM];
  int found_ndim = 0;
  const char *p = shape_value + 1;
  for (;;) {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ')') break;
    char *end;
    long extent = strtol(p, &end, 10);
    if (end == p || extent < 0 || found_ndim == CREF_MAX_NDIM)
      cref_fail("%s: malformed shape in .npy header", path);
    found_shape[found_ndim++] = extent;
    p = end;
    while (*p == 'L') p++; /* Python 2 style long literals */
  }
  int shape_ok = found_ndim == ndim;
  size_t count = 1;
  for (int i = 0; i < ndim; i++) {
    if (shape_ok && found_shape[i] != shape[i]) shape_ok = 0;
    count *= (size_t)shape[i];
  }
  if (!shape_ok) {
    char found_text[160] = "", expected_text[160] = "";
    for (int i = 0; i < found_ndim; i++)
      snprintf(found_text + strlen(found_text), sizeof found_text - strlen(found_text),
               i ? ", %ld" : "%ld", found_shape[i]);
    for (int i = 0; i < ndim; i++)
      snprintf(expected_text + strlen(expected_text),
               sizeof expected_text - strlen(expected_text), i ? ", %ld" : "%ld", shape[i]);
    cref_fail("%s: shape is (%s) but the kernel expects (%s)", path, found_text, expected_text);
  }
  int contiguous_dims = 0;
  for (int i = 0; i < ndim; i++) contiguous_dims += shape[i] > 1;
  if (fortran && contiguous_dims > 1)
    cref_fail("%s: Fortran-ordered arrays are not supported; save it C-ordered", path);
  free(header);

  void *data = cref_alloc(count * item_size);
  if (fread(data, item_size, count, file) != count)
    cref_fail("%s: truncated data (expected %zu items of %zu bytes)", path, count, item_size);
  fclose(file);
  return data;
}

/* Writes a version 1.0 .npy file; the header is padded with spaces so the
 * data starts on a 64-byte boundary, as numpy does. */
static void cref_npy_write(const char *path, const char *descr, size_t item_size, int ndim,
                           const long *shape, const void *data) {
  char dict[512];
  int used = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                      descr);
  size_t count = 1;
  for (int i = 0; i < ndim; i++) {
    used += snprintf(dict + used, sizeof dict - (size_t)used, "%ld%s", shape[i],
                     (ndim == 1 || i + 1 < ndim) ? "," : "");
    if (i + 1 < ndim) used += snprintf(dict + used, sizeof dict - (size_t)used, " ");
    count *= (size_t)shape[i];
  }
  used += snprintf(dict + used, sizeof dict - (size_t)used, "), }");
  size_t unpadded = 10 + (size_t)used + 1; /* preamble + dict + '\n' */
  size_t padding = (64 - unpadded % 64) % 64;
  size_t header_len = (size_t)used + padding + 1;
  FILE *file = fopen(path, "wb");
  if (file == NULL) cref_fail("%s: cannot create output file", path);
  unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                (unsigned char)(header_len & 0xff),
                                (unsigned char)(header_len >> 8)};
  int ok = fwrite(preamble, 1, 10, file) == 10 &&
           fwrite(dict, 1, (size_t)used, file) == (size_t)used;
  for (size_t i = 0; ok && i < padding; i++) ok = fputc(' ', file) != EOF;
  ok = ok && fputc('\n', file) != EOF;
  ok = ok && fwrite(data, item_size, count, file) == count;
  if (fclose(file) != 0 || !ok) cref_fail("%s: write failed", path);
}

#endif /* CREF_NPY_H */
