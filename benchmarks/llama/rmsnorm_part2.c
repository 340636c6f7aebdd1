/* Second part of llama2.c's rmsnorm: normalise x by the root mean square derived from the
 * sum of squares ss, then scale by the learned weight. */
#include <math.h>

void rmsnorm_part2(float *o, float *x, float *weight, float ss, int size)
{
    ss /= size;
    ss += 1e-5f;
    ss = 1.0f / sqrtf(ss);
    for (int j = 0; j < size; j++)
        o[j] = weight[j] * (ss * x[j]);
}
