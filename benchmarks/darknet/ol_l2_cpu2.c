/* Second half of darknet's l2_cpu loss: the gradient (truth - prediction) per element. */
void ol_l2_cpu2(int n, float *pred, float *truth, float *delta)
{
    int i;
    for (i = 0; i < n; ++i)
        delta[i] = truth[i] - pred[i];
}
