/* PolyBench 4.2 3mm: three matrix products, G = (A * B) * (C * D). */

/* PolyBench marks the static control part with #pragma scop/endscop; gcc and clang do not
 * know them and must stay quiet under -Wall -Werror. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

/* Dataset sizes come from -D<SIZE> (the default is PolyBench's LARGE); the kernel itself
 * reads the sizes from its int parameters, the arrays are C99 variable-length arrays. */
#ifndef NI
#define NI 800
#endif
#ifndef NJ
#define NJ 900
#endif
#ifndef NK
#define NK 1000
#endif
#ifndef NL
#define NL 1100
#endif
#ifndef NM
#define NM 1200
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

void kernel_3mm(int ni, int nj, int nk, int nl, int nm,
                DATA_TYPE POLYBENCH_2D(E, NI, NJ, ni, nj),
                DATA_TYPE POLYBENCH_2D(A, NI, NK, ni, nk),
                DATA_TYPE POLYBENCH_2D(B, NK, NJ, nk, nj),
                DATA_TYPE POLYBENCH_2D(F, NJ, NL, nj, nl),
                DATA_TYPE POLYBENCH_2D(C, NJ, NM, nj, nm),
                DATA_TYPE POLYBENCH_2D(D, NM, NL, nm, nl),
                DATA_TYPE POLYBENCH_2D(G, NI, NL, ni, nl))
{
  int i, j, k;

#pragma scop
  /* E := A * B */
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      E[i][j] = SCALAR_VAL(0.0);
      for (k = 0; k < nk; ++k)
        E[i][j] += A[i][k] * B[k][j];
    }
  /* F := C * D */
  for (i = 0; i < nj; i++)
    for (j = 0; j < nl; j++) {
      F[i][j] = SCALAR_VAL(0.0);
      for (k = 0; k < nm; ++k)
        F[i][j] += C[i][k] * D[k][j];
    }
  /* G := E * F */
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++) {
      G[i][j] = SCALAR_VAL(0.0);
      for (k = 0; k < nj; ++k)
        G[i][j] += E[i][k] * F[k][j];
    }
#pragma endscop
}
