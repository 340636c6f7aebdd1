/* DSPstone-style FIR filter step, pointer-walking form: one output sample
 * y = sum_i h[i] * x[i] over the delay line, then the delay line shifts by
 * one (x[i] = x[i-1], walked from the end) and the new sample enters. */
#ifndef N
#define N 16
#endif

typedef int TYPE;

TYPE fir_delay(TYPE x[N], TYPE h[N], TYPE sample)
{
    TYPE *p_x = &x[0], *p_h = &h[0];
    TYPE y = 0;
    int i;

    for (i = 0; i < N; i++)
        y += *p_h++ * *p_x++;
    p_x = &x[N - 1];
    for (i = 0; i < N - 1; i++) {
        *p_x = *(p_x - 1);
        p_x--;
    }
    *p_x = sample;
    return y;
}
