/* uint8 image to float in [0, 1] with per-channel mean and scale. */
#include <stdint.h>
void u8_normalize(int h, int w, const uint8_t *img, float mean, float inv_std, float *out)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            out[y * w + x] = (img[y * w + x] / 255.0f - mean) * inv_std;
}
