/* DSPstone-style LMS weight update alone, pointer-walking form:
 * w[i] += mu_err * x[i] for a given scaled error. */
#ifndef N
#define N 16
#endif

typedef int TYPE;

void lms_update(TYPE x[N], TYPE w[N], TYPE mu_err)
{
    TYPE *p_x = &x[0];
    TYPE *p_w = &w[0];
    int i;

    for (i = 0; i < N; i++) {
        *p_w += mu_err * *p_x++;
        p_w++;
    }
}
