/* polybench.c: the run-time functions declared by tenslift's polybench.h
 * (timer, cache flush, aligned allocation), written for tenslift from the
 * PolyBench/C 4.2 documentation of the interface. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "polybench.h"

#ifndef POLYBENCH_CACHE_SIZE_KB
#define POLYBENCH_CACHE_SIZE_KB 32770
#endif

static double polybench_t_start;
static double polybench_t_end;

static double polybench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reads a buffer larger than the last-level cache so that every timed run
 * starts cold, as the suite's instruments do. */
void polybench_flush_cache(void) {
  size_t count = (size_t)POLYBENCH_CACHE_SIZE_KB * 1024 / sizeof(double);
  double *flush = calloc(count, sizeof(double));
  double sum = 0.0;
  size_t i;
  if (flush == NULL)
    return;
  for (i = 0; i < count; i++)
    sum += flush[i];
  if (sum != 0.0) /* never true; keeps the reads alive */
    fprintf(stderr, "polybench: cache flush saw %f\n", sum);
  free(flush);
}

void polybench_prepare_instruments(void) { polybench_flush_cache(); }

void polybench_timer_start(void) {
  polybench_prepare_instruments();
  polybench_t_start = polybench_now();
}

void polybench_timer_stop(void) { polybench_t_end = polybench_now(); }

void polybench_timer_print(void) { printf("%0.6f\n", polybench_t_end - polybench_t_start); }

/* Arrays are aligned to 4096 bytes: vector loads never straddle a page and
 * timings do not depend on where malloc happened to place an array. */
void *polybench_alloc_data(unsigned long long n, int elt_size) {
  void *ptr = NULL;
  size_t bytes = (size_t)n * (size_t)elt_size;
  if (posix_memalign(&ptr, 4096, bytes ? bytes : 1) != 0 || ptr == NULL) {
    fprintf(stderr, "polybench: cannot allocate %zu bytes\n", bytes);
    exit(1);
  }
  return ptr;
}

void polybench_free_data(void *ptr) { free(ptr); }
