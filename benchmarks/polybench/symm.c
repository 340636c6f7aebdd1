/* PolyBench 4.2 symm: C = alpha * A * B + beta * C with A symmetric, only its lower
 * triangle (including the diagonal) is read. */

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

void kernel_symm(int m, int n,
                 DATA_TYPE alpha,
                 DATA_TYPE beta,
                 DATA_TYPE POLYBENCH_2D(C, M, N, m, n),
                 DATA_TYPE POLYBENCH_2D(A, M, M, m, m),
                 DATA_TYPE POLYBENCH_2D(B, M, N, m, n))
{
  int i, j, k;
  DATA_TYPE temp2;

#pragma scop
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      temp2 = 0;
      for (k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        temp2 += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
    }
#pragma endscop
}
