/* trisolv.c: PolyBench/C 4.2 trisolv in the distribution's layout and default form
 * (fixed-size arrays padded by POLYBENCH_PADDING_FACTOR, loops bounded by the
 * run-time sizes through _PB_*, sizes from -D<SIZE>_DATASET). Written for tenslift;
 * the computation is exactly that of benchmarks/polybench/trisolv.c. */
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <math.h>

/* The suite's interface (-I utilities) and this kernel's sizes and data type. */
#include <polybench.h>
#include "trisolv.h"

/* Deterministic inputs (closed-form, as the suite initialises; no random numbers). */
static void init_array(int n,
                       DATA_TYPE POLYBENCH_2D(L, N, N, n, n),
                       DATA_TYPE POLYBENCH_1D(x, N, n),
                       DATA_TYPE POLYBENCH_1D(b, N, n))
{
  int i, j;

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      L[i][j] = i == j ? (DATA_TYPE)(n + 1) : (DATA_TYPE)((i + j) % n) / n;
  for (i = 0; i < n; i++)
    x[i] = (DATA_TYPE)(((i + 2)) % n) / n;
  for (i = 0; i < n; i++)
    b[i] = (DATA_TYPE)(((i + 3)) % n) / n;
}


/* Writes every array the kernel writes to the dump target, twenty values a line. */
static void print_array(int n,
                        DATA_TYPE POLYBENCH_1D(x, N, n))
{
  int i;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("x");
  for (i = 0; i < n; i++) {
    if ((i) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, x[i]);
  }
  POLYBENCH_DUMP_END("x");
  POLYBENCH_DUMP_FINISH;
}


/* The kernel: the static control part between #pragma scop and endscop. */
static
void kernel_trisolv(int n, DATA_TYPE POLYBENCH_2D(L, N, N, n, n), DATA_TYPE POLYBENCH_1D(x, N, n),
                    DATA_TYPE POLYBENCH_1D(b, N, n)) {
  int i, j;
#pragma scop
  for (i = 0; i < _PB_N; i++) {
    x[i] = b[i];
    for (j = 0; j < i; j++)
      x[i] -= L[i][j] * x[j];
    x[i] = x[i] / L[i][i];
  }
#pragma endscop
}


int main(int argc, char **argv)
{
  /* Sizes of the chosen dataset. */
  int n = N;

  /* Scalars and arrays, the arrays at their declared (padded) size. */
  POLYBENCH_2D_ARRAY_DECL(L, DATA_TYPE, N, N, n, n);
  POLYBENCH_1D_ARRAY_DECL(x, DATA_TYPE, N, n);
  POLYBENCH_1D_ARRAY_DECL(b, DATA_TYPE, N, n);

  /* Inputs. */
  init_array(n, POLYBENCH_ARRAY(L), POLYBENCH_ARRAY(x), POLYBENCH_ARRAY(b));

  /* Timed with -DPOLYBENCH_TIME. */
  polybench_start_instruments;

  kernel_trisolv(n, POLYBENCH_ARRAY(L), POLYBENCH_ARRAY(x), POLYBENCH_ARRAY(b));

  polybench_stop_instruments;
  polybench_print_instruments;

  /* Dumped with -DPOLYBENCH_DUMP_ARRAYS; otherwise behind a condition the compiler
     cannot decide, so the kernel's stores stay live. */
  polybench_prevent_dce(print_array(n, POLYBENCH_ARRAY(x)));

  POLYBENCH_FREE_ARRAY(L);
  POLYBENCH_FREE_ARRAY(x);
  POLYBENCH_FREE_ARRAY(b);

  return 0;
}
