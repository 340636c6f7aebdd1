/* mvt.c: PolyBench/C 4.2 mvt in the distribution's layout and default form
 * (fixed-size arrays padded by POLYBENCH_PADDING_FACTOR, loops bounded by the
 * run-time sizes through _PB_*, sizes from -D<SIZE>_DATASET). Written for tenslift;
 * the computation is exactly that of benchmarks/polybench/mvt.c. */
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <math.h>

/* The suite's interface (-I utilities) and this kernel's sizes and data type. */
#include <polybench.h>
#include "mvt.h"

/* Deterministic inputs (closed-form, as the suite initialises; no random numbers). */
static void init_array(int n,
                       DATA_TYPE POLYBENCH_1D(x1, N, n),
                       DATA_TYPE POLYBENCH_1D(x2, N, n),
                       DATA_TYPE POLYBENCH_1D(y_1, N, n),
                       DATA_TYPE POLYBENCH_1D(y_2, N, n),
                       DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
  int i, j;

  for (i = 0; i < n; i++)
    x1[i] = (DATA_TYPE)(((i + 1)) % n) / n;
  for (i = 0; i < n; i++)
    x2[i] = (DATA_TYPE)(((i + 2)) % n) / n;
  for (i = 0; i < n; i++)
    y_1[i] = (DATA_TYPE)(((i + 3)) % n) / n;
  for (i = 0; i < n; i++)
    y_2[i] = (DATA_TYPE)(((i + 4)) % n) / n;
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = (DATA_TYPE)(((i + 5) * (j + 5)) % n) / n;
}


/* Writes every array the kernel writes to the dump target, twenty values a line. */
static void print_array(int n,
                        DATA_TYPE POLYBENCH_1D(x1, N, n),
                        DATA_TYPE POLYBENCH_1D(x2, N, n))
{
  int i;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("x1");
  for (i = 0; i < n; i++) {
    if ((i) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, x1[i]);
  }
  POLYBENCH_DUMP_END("x1");
  POLYBENCH_DUMP_BEGIN("x2");
  for (i = 0; i < n; i++) {
    if ((i) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, x2[i]);
  }
  POLYBENCH_DUMP_END("x2");
  POLYBENCH_DUMP_FINISH;
}


/* The kernel: the static control part between #pragma scop and endscop. */
static
void kernel_mvt(int n,
                DATA_TYPE POLYBENCH_1D(x1, N, n),
                DATA_TYPE POLYBENCH_1D(x2, N, n),
                DATA_TYPE POLYBENCH_1D(y_1, N, n),
                DATA_TYPE POLYBENCH_1D(y_2, N, n),
                DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
  int i, j;

#pragma scop
  for (i = 0; i < _PB_N; i++)
    for (j = 0; j < _PB_N; j++)
      x1[i] = x1[i] + A[i][j] * y_1[j];
  for (i = 0; i < _PB_N; i++)
    for (j = 0; j < _PB_N; j++)
      x2[i] = x2[i] + A[j][i] * y_2[j];
#pragma endscop
}


int main(int argc, char **argv)
{
  /* Sizes of the chosen dataset. */
  int n = N;

  /* Scalars and arrays, the arrays at their declared (padded) size. */
  POLYBENCH_1D_ARRAY_DECL(x1, DATA_TYPE, N, n);
  POLYBENCH_1D_ARRAY_DECL(x2, DATA_TYPE, N, n);
  POLYBENCH_1D_ARRAY_DECL(y_1, DATA_TYPE, N, n);
  POLYBENCH_1D_ARRAY_DECL(y_2, DATA_TYPE, N, n);
  POLYBENCH_2D_ARRAY_DECL(A, DATA_TYPE, N, N, n, n);

  /* Inputs. */
  init_array(n, POLYBENCH_ARRAY(x1), POLYBENCH_ARRAY(x2), POLYBENCH_ARRAY(y_1), POLYBENCH_ARRAY(y_2), POLYBENCH_ARRAY(A));

  /* Timed with -DPOLYBENCH_TIME. */
  polybench_start_instruments;

  kernel_mvt(n, POLYBENCH_ARRAY(x1), POLYBENCH_ARRAY(x2), POLYBENCH_ARRAY(y_1), POLYBENCH_ARRAY(y_2), POLYBENCH_ARRAY(A));

  polybench_stop_instruments;
  polybench_print_instruments;

  /* Dumped with -DPOLYBENCH_DUMP_ARRAYS; otherwise behind a condition the compiler
     cannot decide, so the kernel's stores stay live. */
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(x1), POLYBENCH_ARRAY(x2)));

  POLYBENCH_FREE_ARRAY(x1);
  POLYBENCH_FREE_ARRAY(x2);
  POLYBENCH_FREE_ARRAY(y_1);
  POLYBENCH_FREE_ARRAY(y_2);
  POLYBENCH_FREE_ARRAY(A);

  return 0;
}
