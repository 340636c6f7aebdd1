/* PolyBench 4.2 covariance: sample covariance matrix of the m columns of an n x m data matrix. */

/* PolyBench marks the static control part with #pragma scop/endscop; gcc and clang do not
 * know them and must stay quiet under -Wall -Werror. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

/* Dataset sizes come from -D<SIZE> (the default is PolyBench's LARGE); the kernel itself
 * reads the sizes from its int parameters, the arrays are C99 variable-length arrays. */
#ifndef M
#define M 1200
#endif
#ifndef N
#define N 1400
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

void kernel_covariance(int m, int n,
                       DATA_TYPE float_n,
                       DATA_TYPE POLYBENCH_2D(data, N, M, n, m),
                       DATA_TYPE POLYBENCH_2D(cov, M, M, m, m),
                       DATA_TYPE POLYBENCH_1D(mean, M, m))
{
  int i, j, k;

#pragma scop
  /* column means */
  for (j = 0; j < m; j++) {
    mean[j] = SCALAR_VAL(0.0);
    for (i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }

  /* center the columns */
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      data[i][j] -= mean[j];

  /* upper triangle, mirrored into the lower one */
  for (i = 0; i < m; i++)
    for (j = i; j < m; j++) {
      cov[i][j] = SCALAR_VAL(0.0);
      for (k = 0; k < n; k++)
        cov[i][j] += data[k][i] * data[k][j];
      cov[i][j] /= (float_n - SCALAR_VAL(1.0));
      cov[j][i] = cov[i][j];
    }
#pragma endscop
}
