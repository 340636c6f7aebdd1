/* mathfu vector -= scalar: in-place subtraction of a scalar. */
void subeq_sca(float *a, float s, int n)
{
    for (int i = 0; i < n; i++)
        a[i] -= s;
}
