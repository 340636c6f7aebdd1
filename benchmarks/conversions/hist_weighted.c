/* Weighted histogram: bin[i] in [0, nbins); h is declared with its
 * nbins bins (a C99 array parameter), which states the index's range. */
void hist_weighted(int n, int nbins, const int *bin, const float *w, float h[nbins])
{
    for (int i = 0; i < n; i++)
        h[bin[i]] += w[i];
}
