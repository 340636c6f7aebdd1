/* Float to int8-range quantisation: scale and truncate toward zero (C's
 * conversion on the store, no rounding). */
void quantize_trunc(int n, const float *x, float scale, int *q)
{
    for (int i = 0; i < n; i++)
        q[i] = (int)(x[i] * scale);
}
