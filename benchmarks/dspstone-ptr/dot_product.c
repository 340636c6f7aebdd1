/* DSPstone-style dot product, pointer-walking form: z = sum_i a[i] * b[i]. */
#ifndef N
#define N 16
#endif

typedef int TYPE;

TYPE dot_product(TYPE a[N], TYPE b[N])
{
    TYPE *p_a = &a[0];
    TYPE *p_b = &b[0];
    TYPE z = 0;
    int i;

    for (i = 0; i < N; i++)
        z += *p_a++ * *p_b++;
    return z;
}
