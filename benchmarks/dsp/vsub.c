/* TI DSP library style vector subtract: r = x - y. */
void vsub(const float *x, const float *y, float *r, int n)
{
    for (int i = 0; i < n; i++)
        r[i] = x[i] - y[i];
}
