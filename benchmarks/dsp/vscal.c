/* TI DSP library style vector scale: r = x * scale. */
void vscal(const float *x, float scale, float *r, int n)
{
    for (int i = 0; i < n; i++)
        r[i] = x[i] * scale;
}
