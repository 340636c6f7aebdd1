/* DSPstone mat1x3 kernel: matrix times vector, y = h * x, on fixed-size integer arrays
 * (the original multiplies a 3x3 matrix; the dimension is a compile-time size here). */
#ifndef N
#define N 3
#endif

typedef int TYPE;

void mat1x3(TYPE h[N][N], TYPE x[N], TYPE y[N])
{
    int i, j;
    for (i = 0; i < N; i++) {
        TYPE acc = 0;
        for (j = 0; j < N; j++)
            acc += h[i][j] * x[j];
        y[i] = acc;
    }
}
