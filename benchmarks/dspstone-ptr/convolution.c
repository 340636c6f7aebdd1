/* DSPstone-style convolution, pointer-walking form: one output sample
 * y = sum_i x[i] * h[N-1-i]; the impulse response is walked backwards. */
#ifndef N
#define N 16
#endif

typedef int TYPE;

TYPE convolution(TYPE x[N], TYPE h[N])
{
    TYPE *p_x = x;
    TYPE *p_h = &h[N - 1];
    TYPE y = 0;
    int i;

    for (i = 0; i < N; i++)
        y += *p_x++ * *p_h--;
    return y;
}
