/* PolyBench 4.2 trisolv: forward substitution solving L x = b for a lower
 * triangular L (only the lower triangle of L is read). */
/* #pragma scop / endscop mark the static control part as PolyBench does;
 * compilers that do not know them must stay quiet under -Wall -Werror. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

/* Dataset sizes: the driver passes -D<SIZE>; the default is PolyBench's LARGE. */
#ifndef N
#define N 2000
#endif
#ifndef DATA_TYPE
#define DATA_TYPE double
#endif
#ifndef SCALAR_VAL
#define SCALAR_VAL(x) x
#endif
#ifndef POLYBENCH_1D
#define POLYBENCH_1D(var, dim1, ddim1) var[ddim1]
#endif
#ifndef POLYBENCH_2D
#define POLYBENCH_2D(var, dim1, dim2, ddim1, ddim2) var[ddim1][ddim2]
#endif
#ifndef POLYBENCH_3D
#define POLYBENCH_3D(var, dim1, dim2, dim3, ddim1, ddim2, ddim3) var[ddim1][ddim2][ddim3]
#endif

void kernel_trisolv(int n, DATA_TYPE POLYBENCH_2D(L, N, N, n, n), DATA_TYPE POLYBENCH_1D(x, N, n),
                    DATA_TYPE POLYBENCH_1D(b, N, n)) {
  int i, j;
#pragma scop
  for (i = 0; i < n; i++) {
    x[i] = b[i];
    for (j = 0; j < i; j++)
      x[i] -= L[i][j] * x[j];
    x[i] = x[i] / L[i][i];
  }
#pragma endscop
}
