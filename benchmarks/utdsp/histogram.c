/* UTDSP histogram: count the grey levels of an 8-bit image of n pixels into 256 bins.
 * The bin is chosen by the pixel value itself (an indirect subscript). */
void histogram(int *image, int *hist, int n)
{
    int i;
    for (i = 0; i < 256; i++)
        hist[i] = 0;
    for (i = 0; i < n; i++)
        hist[image[i]] += 1;
}
