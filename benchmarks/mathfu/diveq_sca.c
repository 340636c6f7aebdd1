/* mathfu vector /= scalar: in-place division by a non-zero scalar. */
void diveq_sca(float *a, float s, int n)
{
    for (int i = 0; i < n; i++)
        a[i] /= s;
}
