/* Reference loops for `tenslift calibrate` (compiled by scripts/calibrate.py
 * with gcc -O3 -march=native, the bench's gcc baseline flags): the rates at
 * which plain C loops run on this machine, so that the C's time can be
 * predicted from its loop IR (src/predict.rs).
 *
 *   triad    a[i] = b[i] + s * c[i]          streaming: seconds per byte
 *   dot      s += a[i] * b[i]                reduction: seconds per flop
 *   matmul   C[i][j] += A[i][k] * B[k][j]    triple loop, k innermost
 *
 * Usage: calibrate_c N_STREAM N_MATMUL REPEATS. Prints one JSON object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Kept out of line so the compiler cannot fold the repetitions. */
__attribute__((noinline)) static void triad(long n, double *a, const double *b,
                                            const double *c, double s) {
  for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}

__attribute__((noinline)) static double dot(long n, const double *a, const double *b) {
  double s = 0.0;
  for (long i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

__attribute__((noinline)) static void matmul(long n, double *C, const double *A,
                                             const double *B) {
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++)
      for (long k = 0; k < n; k++) C[i * n + j] += A[i * n + k] * B[k * n + j];
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double median(double *t, int k) {
  qsort(t, (size_t)k, sizeof *t, by_value);
  return t[k / 2];
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s N_STREAM N_MATMUL REPEATS\n", argv[0]);
    return 2;
  }
  long n = atol(argv[1]), m = atol(argv[2]);
  int reps = atoi(argv[3]);
  if (n < 1 || m < 1 || reps < 1 || reps > 64) return 2;
  double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n),
         *c = malloc(sizeof(double) * (size_t)n);
  double *A = malloc(sizeof(double) * (size_t)(m * m)),
         *B = malloc(sizeof(double) * (size_t)(m * m)),
         *C = malloc(sizeof(double) * (size_t)(m * m));
  if (!a || !b || !c || !A || !B || !C) return 3;
  for (long i = 0; i < n; i++) a[i] = 0.0, b[i] = 1.0 + (double)(i % 7), c[i] = 0.5;
  for (long i = 0; i < m * m; i++) A[i] = 1.0 / (double)(1 + i % 5), B[i] = 0.25, C[i] = 0.0;
  double t_triad[64], t_dot[64], t_mm[64], sink = 0.0;
  triad(n, a, b, c, 3.0); /* warm-up: first touch of every page */
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    triad(n, a, b, c, 3.0 + r);
    double t1 = now();
    sink += dot(n, a, b);
    double t2 = now();
    matmul(m, C, A, B);
    double t3 = now();
    t_triad[r] = t1 - t0, t_dot[r] = t2 - t1, t_mm[r] = t3 - t2;
  }
  printf("{\"n_stream\": %ld, \"n_matmul\": %ld, \"triad_s\": %.9g, \"dot_s\": %.9g, "
         "\"matmul_s\": %.9g, \"sink\": %.3g}\n",
         n, m, median(t_triad, reps), median(t_dot, reps), median(t_mm, reps), sink + C[m]);
  return 0;
}
