/* First part of llama2.c's softmax: the maximum value, used for numerical stability. */
float softmax_part1(float *x, int size)
{
    float max_val = x[0];
    for (int i = 1; i < size; i++) {
        if (x[i] > max_val)
            max_val = x[i];
    }
    return max_val;
}
