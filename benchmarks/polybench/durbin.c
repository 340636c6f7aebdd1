/* PolyBench 4.2 durbin: Levinson-Durbin recursion solving the Toeplitz
 * system arising in Yule-Walker equations; y receives the solution. */
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

void kernel_durbin(int n, DATA_TYPE POLYBENCH_1D(r, N, n), DATA_TYPE POLYBENCH_1D(y, N, n)) {
  DATA_TYPE z[n];
  DATA_TYPE alpha;
  DATA_TYPE beta;
  DATA_TYPE sum;
  int i, k;
#pragma scop
  y[0] = -r[0];
  beta = SCALAR_VAL(1.0);
  alpha = -r[0];
  for (k = 1; k < n; k++) {
    beta = (1 - alpha * alpha) * beta;
    sum = SCALAR_VAL(0.0);
    for (i = 0; i < k; i++)
      sum += r[k - i - 1] * y[i];
    alpha = -(r[k] + sum) / beta;
    for (i = 0; i < k; i++)
      z[i] = y[i] + alpha * y[k - i - 1];
    for (i = 0; i < k; i++)
      y[i] = z[i];
    y[k] = alpha;
  }
#pragma endscop
}
