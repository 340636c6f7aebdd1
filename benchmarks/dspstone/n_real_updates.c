/* DSPstone n_real_updates kernel: N real multiply-accumulate updates, D = C + A * B. */
#ifndef N
#define N 16
#endif

typedef int TYPE;

void n_real_updates(TYPE A[N], TYPE B[N], TYPE C[N], TYPE D[N])
{
    int i;
    for (i = 0; i < N; i++)
        D[i] = C[i] + A[i] * B[i];
}
