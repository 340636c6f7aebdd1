/* 8-bit color burn: darkens the base by the inverse of the active layer.
 * A black active pixel would divide by zero, so it maps to white as in the 8-bit blend library. */
#include <stdint.h>

void color_burn_8(uint8_t *base, uint8_t *active, uint8_t *out, int m, int n)
{
    for (int row = 0; row < m; row++) {
        for (int col = 0; col < n; col++) {
            int b = base[row * n + col];
            int a = active[row * n + col];
            int pixel;
            if (a == 0)
                pixel = 255;
            else
                pixel = 255 - (255 - b) / a;
            out[row * n + col] = (uint8_t)pixel;
        }
    }
}
