/* DSPstone matrix2 kernel: the same integer product C = A * B as matrix1, written the way
 * DSP code seeds the accumulator with the first product instead of zero. */
#ifndef M
#define M 10
#endif
#ifndef N
#define N 10
#endif
#ifndef K
#define K 10
#endif

typedef int TYPE;

void matrix2(TYPE A[M][K], TYPE B[K][N], TYPE C[M][N])
{
    int i, j, k;
    for (i = 0; i < M; i++) {
        for (j = 0; j < N; j++) {
            TYPE acc = A[i][0] * B[0][j];
            for (k = 1; k < K; k++)
                acc += A[i][k] * B[k][j];
            C[i][j] = acc;
        }
    }
}
