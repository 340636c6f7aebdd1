/* PolyBench 4.2 correlation: Pearson correlation matrix of the m columns of an n x m data matrix.
 * Columns whose standard deviation is at most eps are treated as having deviation 1 (a
 * data-dependent select) so that near-constant columns do not divide by zero. */
#include <math.h>

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

void kernel_correlation(int m, int n,
                        DATA_TYPE float_n,
                        DATA_TYPE POLYBENCH_2D(data, N, M, n, m),
                        DATA_TYPE POLYBENCH_2D(corr, M, M, m, m),
                        DATA_TYPE POLYBENCH_1D(mean, M, m),
                        DATA_TYPE POLYBENCH_1D(stddev, M, m))
{
  int i, j, k;

  DATA_TYPE eps = SCALAR_VAL(0.1);

#pragma scop
  /* column means */
  for (j = 0; j < m; j++) {
    mean[j] = SCALAR_VAL(0.0);
    for (i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }

  /* column standard deviations */
  for (j = 0; j < m; j++) {
    stddev[j] = SCALAR_VAL(0.0);
    for (i = 0; i < n; i++)
      stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
    stddev[j] /= float_n;
    stddev[j] = SQRT_FUN(stddev[j]);
    stddev[j] = stddev[j] <= eps ? SCALAR_VAL(1.0) : stddev[j];
  }

  /* center and reduce the column vectors */
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) {
      data[i][j] -= mean[j];
      data[i][j] /= SQRT_FUN(float_n) * stddev[j];
    }

  /* the m x m correlation matrix, symmetric with a unit diagonal */
  for (i = 0; i < m - 1; i++) {
    corr[i][i] = SCALAR_VAL(1.0);
    for (j = i + 1; j < m; j++) {
      corr[i][j] = SCALAR_VAL(0.0);
      for (k = 0; k < n; k++)
        corr[i][j] += (data[k][i] * data[k][j]);
      corr[j][i] = corr[i][j];
    }
  }
  corr[m - 1][m - 1] = SCALAR_VAL(1.0);
#pragma endscop
}
