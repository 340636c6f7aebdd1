/* PolyBench 4.2 syrk: symmetric rank-k update of the lower triangle of C,
 * C = alpha * A * A^T + beta * C. */

/* PolyBench marks the static control part with #pragma scop/endscop; gcc and clang do not
 * know them and must stay quiet under -Wall -Werror. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

/* Dataset sizes come from -D<SIZE> (the default is PolyBench's LARGE); the kernel itself
 * reads the sizes from its int parameters, the arrays are C99 variable-length arrays. */
#ifndef M
#define M 1000
#endif
#ifndef N
#define N 1200
#endif
#ifndef DATA_TYPE
#define DATA_TYPE double
#endif
#ifndef SCALAR_VAL
#define SCALAR_VAL(x) x
#endif
#ifndef SQRT_FUN
#define SQRT_FUN(x) sqrt(x)
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

void kernel_syrk(int n, int m,
                 DATA_TYPE alpha,
                 DATA_TYPE beta,
                 DATA_TYPE POLYBENCH_2D(C, N, N, n, n),
                 DATA_TYPE POLYBENCH_2D(A, N, M, n, m))
{
  int i, j, k;

#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (k = 0; k < m; k++)
      for (j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
  }
#pragma endscop
}
