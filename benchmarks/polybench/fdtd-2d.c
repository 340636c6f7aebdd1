/* PolyBench 4.2 fdtd-2d: 2-D finite-difference time-domain kernel for
 * Maxwell's equations: per time step, a source row of ey from _fict_, then
 * the E-field (ex, ey) and H-field (hz) updates. */
/* #pragma scop / endscop mark the static control part as PolyBench does;
 * compilers that do not know them must stay quiet under -Wall -Werror. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

/* Dataset sizes: the driver passes -D<SIZE>; the default is PolyBench's LARGE. */
#ifndef TMAX
#define TMAX 500
#endif
#ifndef NX
#define NX 1000
#endif
#ifndef NY
#define NY 1200
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

void kernel_fdtd_2d(int tmax, int nx, int ny, DATA_TYPE POLYBENCH_2D(ex, NX, NY, nx, ny),
                    DATA_TYPE POLYBENCH_2D(ey, NX, NY, nx, ny),
                    DATA_TYPE POLYBENCH_2D(hz, NX, NY, nx, ny),
                    DATA_TYPE POLYBENCH_1D(_fict_, TMAX, tmax)) {
  int t, i, j;
#pragma scop
  for (t = 0; t < tmax; t++) {
    for (j = 0; j < ny; j++)
      ey[0][j] = _fict_[t];
    for (i = 1; i < nx; i++)
      for (j = 0; j < ny; j++)
        ey[i][j] = ey[i][j] - SCALAR_VAL(0.5) * (hz[i][j] - hz[i - 1][j]);
    for (i = 0; i < nx; i++)
      for (j = 1; j < ny; j++)
        ex[i][j] = ex[i][j] - SCALAR_VAL(0.5) * (hz[i][j] - hz[i][j - 1]);
    for (i = 0; i < nx - 1; i++)
      for (j = 0; j < ny - 1; j++)
        hz[i][j] = hz[i][j] - SCALAR_VAL(0.7) * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
#pragma endscop
}
