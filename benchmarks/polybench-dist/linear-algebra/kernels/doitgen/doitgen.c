/* doitgen.c: PolyBench/C 4.2 doitgen in the distribution's layout and default form
 * (fixed-size arrays padded by POLYBENCH_PADDING_FACTOR, loops bounded by the
 * run-time sizes through _PB_*, sizes from -D<SIZE>_DATASET). Written for tenslift;
 * the computation is exactly that of benchmarks/polybench/doitgen.c. */
#include <stdio.h>
#include <unistd.h>
#include <string.h>
#include <math.h>

/* The suite's interface (-I utilities) and this kernel's sizes and data type. */
#include <polybench.h>
#include "doitgen.h"

/* Deterministic inputs (closed-form, as the suite initialises; no random numbers). */
static void init_array(int nr,
                       int nq,
                       int np,
                       DATA_TYPE POLYBENCH_3D(A, NR, NQ, NP, nr, nq, np),
                       DATA_TYPE POLYBENCH_2D(C4, NP, NP, np, np),
                       DATA_TYPE POLYBENCH_1D(sum, NP, np))
{
  int i, j, k;

  for (i = 0; i < nr; i++)
    for (j = 0; j < nq; j++)
      for (k = 0; k < np; k++)
        A[i][j][k] = (DATA_TYPE)(((i + 1) * (j + 1) * (k + 1)) % nr) / nr;
  for (i = 0; i < np; i++)
    for (j = 0; j < np; j++)
      C4[i][j] = (DATA_TYPE)(((i + 2) * (j + 2)) % np) / np;
  for (i = 0; i < np; i++)
    sum[i] = (DATA_TYPE)(((i + 3)) % np) / np;
}


/* Writes every array the kernel writes to the dump target, twenty values a line. */
static void print_array(int nr,
                        int nq,
                        int np,
                        DATA_TYPE POLYBENCH_3D(A, NR, NQ, NP, nr, nq, np),
                        DATA_TYPE POLYBENCH_1D(sum, NP, np))
{
  int i, j, k;

  POLYBENCH_DUMP_START;
  POLYBENCH_DUMP_BEGIN("A");
  for (i = 0; i < nr; i++)
    for (j = 0; j < nq; j++)
      for (k = 0; k < np; k++) {
        if (((i * nq + j) * np + k) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
        fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, A[i][j][k]);
      }
  POLYBENCH_DUMP_END("A");
  POLYBENCH_DUMP_BEGIN("sum");
  for (i = 0; i < np; i++) {
    if ((i) % 20 == 0) fprintf(POLYBENCH_DUMP_TARGET, "\n");
    fprintf(POLYBENCH_DUMP_TARGET, DATA_PRINTF_MODIFIER, sum[i]);
  }
  POLYBENCH_DUMP_END("sum");
  POLYBENCH_DUMP_FINISH;
}


/* The kernel: the static control part between #pragma scop and endscop. */
static
void kernel_doitgen(int nr, int nq, int np,
                    DATA_TYPE POLYBENCH_3D(A, NR, NQ, NP, nr, nq, np),
                    DATA_TYPE POLYBENCH_2D(C4, NP, NP, np, np),
                    DATA_TYPE POLYBENCH_1D(sum, NP, np))
{
  int r, q, p, s;

#pragma scop
  for (r = 0; r < _PB_NR; r++)
    for (q = 0; q < _PB_NQ; q++) {
      for (p = 0; p < _PB_NP; p++) {
        sum[p] = SCALAR_VAL(0.0);
        for (s = 0; s < _PB_NP; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }
      for (p = 0; p < _PB_NP; p++)
        A[r][q][p] = sum[p];
    }
#pragma endscop
}


int main(int argc, char **argv)
{
  /* Sizes of the chosen dataset. */
  int nr = NR;
  int nq = NQ;
  int np = NP;

  /* Scalars and arrays, the arrays at their declared (padded) size. */
  POLYBENCH_3D_ARRAY_DECL(A, DATA_TYPE, NR, NQ, NP, nr, nq, np);
  POLYBENCH_2D_ARRAY_DECL(C4, DATA_TYPE, NP, NP, np, np);
  POLYBENCH_1D_ARRAY_DECL(sum, DATA_TYPE, NP, np);

  /* Inputs. */
  init_array(nr, nq, np, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(C4), POLYBENCH_ARRAY(sum));

  /* Timed with -DPOLYBENCH_TIME. */
  polybench_start_instruments;

  kernel_doitgen(nr, nq, np, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(C4), POLYBENCH_ARRAY(sum));

  polybench_stop_instruments;
  polybench_print_instruments;

  /* Dumped with -DPOLYBENCH_DUMP_ARRAYS; otherwise behind a condition the compiler
     cannot decide, so the kernel's stores stay live. */
  polybench_prevent_dce(print_array(nr, nq, np, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(sum)));

  POLYBENCH_FREE_ARRAY(A);
  POLYBENCH_FREE_ARRAY(C4);
  POLYBENCH_FREE_ARRAY(sum);

  return 0;
}
