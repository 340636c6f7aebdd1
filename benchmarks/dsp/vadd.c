/* TI DSP library style vector add: r = x + y. */
void vadd(const float *x, const float *y, float *r, int n)
{
    for (int i = 0; i < n; i++)
        r[i] = x[i] + y[i];
}
