/* mathfu Lerp: linear interpolation out = a * (1 - t) + b * t. */
void lerp(float *out, const float *a, const float *b, float t, int n)
{
    for (int i = 0; i < n; i++)
        out[i] = a[i] * (1.0f - t) + b[i] * t;
}
