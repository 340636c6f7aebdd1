/* DSPstone-style matrix1x3, pointer-walking form: y = h * x with h an
 * N x N matrix stored row-major; the matrix pointer is never reset, it
 * walks on from one row to the next. */
#ifndef N
#define N 3
#endif

typedef int TYPE;

void matrix1x3(TYPE *h, TYPE x[N], TYPE y[N])
{
    TYPE *p_h = &h[0];
    TYPE *p_x;
    TYPE *p_y = &y[0];
    int i, j;

    for (i = 0; i < N; i++) {
        p_x = &x[0];
        *p_y = 0;
        for (j = 0; j < N; j++)
            *p_y += *p_h++ * *p_x++;
        p_y++;
    }
}
