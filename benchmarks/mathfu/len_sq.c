/* mathfu LengthSquared: the squared Euclidean length of a vector. */
float len_sq(const float *a, int n)
{
    float sum = 0.0f;
    for (int i = 0; i < n; i++)
        sum += a[i] * a[i];
    return sum;
}
