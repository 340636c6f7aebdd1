/* PolyBench 4.2 mvt: a matrix-vector product and a transposed one, x1 += A y_1, x2 += A^T y_2. */

/* PolyBench marks the static control part with #pragma scop/endscop; gcc and clang do not
 * know them and must stay quiet under -Wall -Werror. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

/* Dataset sizes come from -D<SIZE> (the default is PolyBench's LARGE); the kernel itself
 * reads the sizes from its int parameters, the arrays are C99 variable-length arrays. */
#ifndef N
#define N 2000
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

void kernel_mvt(int n,
                DATA_TYPE POLYBENCH_1D(x1, N, n),
                DATA_TYPE POLYBENCH_1D(x2, N, n),
                DATA_TYPE POLYBENCH_1D(y_1, N, n),
                DATA_TYPE POLYBENCH_1D(y_2, N, n),
                DATA_TYPE POLYBENCH_2D(A, N, N, n, n))
{
  int i, j;

#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x1[i] = x1[i] + A[i][j] * y_1[j];
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x2[i] = x2[i] + A[j][i] * y_2[j];
#pragma endscop
}
