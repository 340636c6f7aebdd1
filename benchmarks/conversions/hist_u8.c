/* Histogram of uint8 pixels. */
#include <stdint.h>
void hist_u8(int n, const uint8_t *img, int *h)
{
    for (int b = 0; b < 256; b++)
        h[b] = 0;
    for (int i = 0; i < n; i++)
        h[img[i]]++;
}
