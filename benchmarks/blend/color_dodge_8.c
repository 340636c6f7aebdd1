/* 8-bit color dodge: brightens the base by dividing by the inverted active layer.
 * A white active pixel would divide by zero, so it maps to white. */
#include <stdint.h>

void color_dodge_8(uint8_t *base, uint8_t *active, uint8_t *out, int m, int n)
{
    for (int row = 0; row < m; row++) {
        for (int col = 0; col < n; col++) {
            int b = base[row * n + col];
            int a = active[row * n + col];
            int pixel;
            if (a == 255)
                pixel = 255;
            else
                pixel = b / (255 - a);
            out[row * n + col] = (uint8_t)pixel;
        }
    }
}
