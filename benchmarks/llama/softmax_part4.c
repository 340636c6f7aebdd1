/* Fourth part of llama2.c's softmax: normalise in place by the sum. */
void softmax_part4(float *x, float sum, int size)
{
    for (int i = 0; i < size; i++)
        x[i] /= sum;
}
