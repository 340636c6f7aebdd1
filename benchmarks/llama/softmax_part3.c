/* Third part of llama2.c's softmax: the sum of the exponentiated values. */
float softmax_part3(float *x, int size)
{
    float sum = 0.0f;
    for (int i = 0; i < size; i++)
        sum += x[i];
    return sum;
}
