/* Darknet mse_array: root of the mean of the squared entries. */
#include <math.h>

float mse_array(float *a, int n)
{
    int i;
    float sum = 0;
    for (i = 0; i < n; ++i)
        sum += a[i] * a[i];
    return sqrtf(sum / n);
}
