/* TI DSP library style vector reciprocal: r = 1 / x (x is never zero). */
void vrecip(const float *x, float *r, int n)
{
    for (int i = 0; i < n; i++)
        r[i] = 1.0f / x[i];
}
