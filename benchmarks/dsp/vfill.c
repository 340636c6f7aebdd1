/* TI DSP library style vector fill: every element of r becomes value. */
void vfill(float *r, float value, int n)
{
    for (int i = 0; i < n; i++)
        r[i] = value;
}
