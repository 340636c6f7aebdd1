/* PolyBench 4.2 gesummv: sum of two scaled matrix-vector products, y = alpha * A x + beta * B x. */

/* PolyBench marks the static control part with #pragma scop/endscop; gcc and clang do not
 * know them and must stay quiet under -Wall -Werror. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

/* Dataset sizes come from -D<SIZE> (the default is PolyBench's LARGE); the kernel itself
 * reads the sizes from its int parameters, the arrays are C99 variable-length arrays. */
#ifndef N
#define N 1300
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

void kernel_gesummv(int n,
                    DATA_TYPE alpha,
                    DATA_TYPE beta,
                    DATA_TYPE POLYBENCH_2D(A, N, N, n, n),
                    DATA_TYPE POLYBENCH_2D(B, N, N, n, n),
                    DATA_TYPE POLYBENCH_1D(tmp, N, n),
                    DATA_TYPE POLYBENCH_1D(x, N, n),
                    DATA_TYPE POLYBENCH_1D(y, N, n))
{
  int i, j;

#pragma scop
  for (i = 0; i < n; i++) {
    tmp[i] = SCALAR_VAL(0.0);
    y[i] = SCALAR_VAL(0.0);
    for (j = 0; j < n; j++) {
      tmp[i] = A[i][j] * x[j] + tmp[i];
      y[i] = B[i][j] * x[j] + y[i];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }
#pragma endscop
}
