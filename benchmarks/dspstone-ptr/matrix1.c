/* DSPstone-style matrix1, pointer-walking form: C = A * B with A M x K,
 * B K x N and C M x N stored row-major in flat arrays. Three walking
 * pointers: p_a along a row of A, p_b down a column of B (stride N), p_c
 * along C. */
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

void matrix1(TYPE *A, TYPE *B, TYPE *C)
{
    TYPE *p_a, *p_b;
    TYPE *p_c = &C[0];
    int i, j, k;

    for (i = 0; i < M; i++) {
        for (j = 0; j < N; j++) {
            p_a = &A[i * K];
            p_b = &B[j];
            *p_c = 0;
            for (k = 0; k < K; k++) {
                *p_c += *p_a++ * *p_b;
                p_b += N;
            }
            p_c++;
        }
    }
}
