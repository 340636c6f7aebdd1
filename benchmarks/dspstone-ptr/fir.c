/* DSPstone-style FIR filter, pointer-walking form: N output samples of a
 * T-tap filter, y[i] = sum_j h[j] * x[i + j]. The coefficient pointer is
 * reset for every output, the input pointer is walked back after each
 * output so that it starts one sample later. */
#ifndef N
#define N 16
#endif
#ifndef T
#define T 8
#endif

typedef int TYPE;

void fir(TYPE x[N + T], TYPE h[T], TYPE y[N])
{
    TYPE *p_x = &x[0];
    TYPE *p_h;
    TYPE *p_y = y;
    int i, j;

    for (i = 0; i < N; i++) {
        p_h = h;
        *p_y = 0;
        for (j = 0; j < T; j++)
            *p_y += *p_h++ * *p_x++;
        p_y++;
        p_x -= T - 1;
    }
}
