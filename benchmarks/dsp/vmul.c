/* TI DSP library style element-wise vector multiply: r = x * y. */
void vmul(const float *x, const float *y, float *r, int n)
{
    for (int i = 0; i < n; i++)
        r[i] = x[i] * y[i];
}
