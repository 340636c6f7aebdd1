/* DSPstone matrix1 kernel: integer matrix product C = A * B with A M x K and B K x N,
 * sizes fixed at compile time. */
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

void matrix1(TYPE A[M][K], TYPE B[K][N], TYPE C[M][N])
{
    int i, j, k;
    for (i = 0; i < M; i++) {
        for (j = 0; j < N; j++) {
            TYPE acc = 0;
            for (k = 0; k < K; k++)
                acc += A[i][k] * B[k][j];
            C[i][j] = acc;
        }
    }
}
