/* syrk.c: PolyBench/C 4.2 syrk in the distribution's layout and default form
 * (fixed-size arrays padded by POLYBENCH_PADDING_FACTOR, loops bounded by the
 * run-time sizes through _PB_*, sizes from -D<SIZE>_DATASET). Written for tenslift;
 * the computation is exactly that of benchmarks/polybench/syrk.c. */
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <math.h>

/* The suite's interface (-I utilities) and this kernel's sizes and data type. */
#include <polybench.h>
#include "syrk.h"

/* Deterministic inputs (closed-form, as the suite initialises; no random numbers). */
static void init_array(int n,
                       int m,
                       DATA_TYPE *alpha,
                       DATA_TYPE *beta,
                       DATA_TYPE POLYBENCH_2D(C, N, N, n, n),
                       DATA_TYPE POLYBENCH_2D(A, N, M, n, m))
{
  int i, j;

  *alpha = SCALAR_VAL(1.5);
  *beta = SCALAR_VAL(1.2);
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      C[i][j] = (DATA_TYPE)(((i + 1) * (j + 1)) % n) / n;
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      A[i][j] = (DATA_TYPE)(((i + 2) * (j + 2)) % n) / n;
}


/* Writes every array the kernel writes to the dump target, twenty values a line. */
static void print_array(int n,
                        DATA_TYPE POLYBENCH_2D(C, N, N, n, n))
{
  int i, j;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("C");
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++) {
      if ((i * n + j) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
      fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, C[i][j]);
    }
  POLYBENCH_DUMP_END("C");
  POLYBENCH_DUMP_FINISH;
}


/* The kernel: the static control part between #pragma scop and endscop. */
static
void kernel_syrk(int n, int m,
                 DATA_TYPE alpha,
                 DATA_TYPE beta,
                 DATA_TYPE POLYBENCH_2D(C, N, N, n, n),
                 DATA_TYPE POLYBENCH_2D(A, N, M, n, m))
{
  int i, j, k;

#pragma scop
  for (i = 0; i < _PB_N; i++) {
    for (j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (k = 0; k < _PB_M; k++)
      for (j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
  }
#pragma endscop
}


int main(int argc, char **argv)
{
  /* Sizes of the chosen dataset. */
  int n = N;
  int m = M;

  /* Scalars and arrays, the arrays at their declared (padded) size. */
  DATA_TYPE alpha;
  DATA_TYPE beta;
  POLYBENCH_2D_ARRAY_DECL(C, DATA_TYPE, N, N, n, n);
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, M, n, m);

  /* Inputs. */
  init_array(n, m, &alpha, &beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A));

  /* Timed with -DPOLYBENCH_TIME. */
  polybench_start_instruments;

  kernel_syrk(n, m, alpha, beta, POLYBENCH_ARRAY(C), POLYBENCH_ARRAY(A));

  polybench_stop_instruments;
  polybench_print_instruments;

  /* Dumped with -DPOLYBENCH_DUMP_ARRAYS; otherwise behind a condition the compiler
     cannot decide, so the kernel's stores stay live. */
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(C)));

  POLYBENCH_FREE_ARRAY(C);
  POLYBENCH_FREE_ARRAY(A);

  return 0;
}
