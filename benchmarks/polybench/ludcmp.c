/* PolyBench 4.2 ludcmp: solves A x = b by an in-place LU decomposition of A
 * (no pivoting), forward substitution into y, then back substitution into x. */
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

void kernel_ludcmp(int n, DATA_TYPE POLYBENCH_2D(A, N, N, n, n), DATA_TYPE POLYBENCH_1D(b, N, n),
                   DATA_TYPE POLYBENCH_1D(x, N, n), DATA_TYPE POLYBENCH_1D(y, N, n)) {
  int i, j, k;
  DATA_TYPE w;
#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j < i; j++) {
      w = A[i][j];
      for (k = 0; k < j; k++)
        w -= A[i][k] * A[k][j];
      A[i][j] = w / A[j][j];
    }
    for (j = i; j < n; j++) {
      w = A[i][j];
      for (k = 0; k < i; k++)
        w -= A[i][k] * A[k][j];
      A[i][j] = w;
    }
  }
  for (i = 0; i < n; i++) {
    w = b[i];
    for (j = 0; j < i; j++)
      w -= A[i][j] * y[j];
    y[i] = w;
  }
  for (i = n - 1; i >= 0; i--) {
    w = y[i];
    for (j = i + 1; j < n; j++)
      w -= A[i][j] * x[j];
    x[i] = w / A[i][i];
  }
#pragma endscop
}
