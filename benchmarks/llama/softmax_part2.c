/* Second part of llama2.c's softmax: exponentiate in place, shifted by the maximum. */
#include <math.h>

void softmax_part2(float *x, float max_val, int size)
{
    for (int i = 0; i < size; i++)
        x[i] = expf(x[i] - max_val);
}
