/* DSPstone-style LMS adaptive filter step, pointer-walking form: the
 * filter output y = sum_i w[i] * x[i], then the weight update
 * w[i] += mu_err * x[i] with the scaled error mu_err = mu * (d - y). */
#ifndef N
#define N 16
#endif

typedef int TYPE;

TYPE lms(TYPE x[N], TYPE w[N], TYPE d, TYPE mu)
{
    TYPE *p_x = x, *p_w = w;
    TYPE y = 0, mu_err;
    int i;

    for (i = 0; i < N; i++)
        y += *p_w++ * *p_x++;
    mu_err = mu * (d - y);
    p_x = x;
    p_w = w;
    for (i = 0; i < N; i++)
        *p_w++ += mu_err * *p_x++;
    return y;
}
