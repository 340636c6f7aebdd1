/* mathfu Length: the Euclidean length of a vector. */
#include <math.h>

float len(const float *a, int n)
{
    float sum = 0.0f;
    for (int i = 0; i < n; i++)
        sum += a[i] * a[i];
    return sqrtf(sum);
}
