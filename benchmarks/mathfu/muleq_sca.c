/* mathfu vector *= scalar: in-place scaling. */
void muleq_sca(float *a, float s, int n)
{
    for (int i = 0; i < n; i++)
        a[i] *= s;
}
