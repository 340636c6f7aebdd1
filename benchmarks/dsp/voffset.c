/* TI DSP library style vector offset: r = x + offset. */
void voffset(const float *x, float offset, float *r, int n)
{
    for (int i = 0; i < n; i++)
        r[i] = x[i] + offset;
}
