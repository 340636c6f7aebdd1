/* Weighted histogram: bin[i] in [0, nbins). */
void hist_weighted(int n, int nbins, const int *bin, const float *w, float *h)
{
    for (int i = 0; i < n; i++)
        h[bin[i]] += w[i];
}
