/* DSPstone-style n_real_updates, pointer-walking form: N real
 * multiply-accumulate updates, D[i] = C[i] + A[i] * B[i]. */
#ifndef N
#define N 16
#endif

typedef int TYPE;

void n_real_updates(TYPE A[N], TYPE B[N], TYPE C[N], TYPE D[N])
{
    TYPE *p_a = &A[0], *p_b = &B[0], *p_c = &C[0], *p_d = &D[0];
    int i;

    for (i = 0; i < N; i++)
        *p_d++ = *p_c++ + *p_a++ * *p_b++;
}
