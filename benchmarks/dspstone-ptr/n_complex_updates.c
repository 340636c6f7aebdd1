/* DSPstone-style n_complex_updates, pointer-walking form: N complex
 * multiply-accumulate updates D = C + A * B on interleaved arrays
 * (re, im, re, im, ...). */
#ifndef N
#define N 16
#endif

typedef int TYPE;

void n_complex_updates(TYPE A[2 * N], TYPE B[2 * N], TYPE C[2 * N], TYPE D[2 * N])
{
    TYPE *p_a = &A[0], *p_b = &B[0], *p_c = &C[0], *p_d = &D[0];
    int i;

    for (i = 0; i < N; i++) {
        *p_d = *p_c++ + *p_a * *p_b - *(p_a + 1) * *(p_b + 1);
        *(p_d + 1) = *p_c++ + *p_a * *(p_b + 1) + *(p_a + 1) * *p_b;
        p_a += 2;
        p_b += 2;
        p_d += 2;
    }
}
