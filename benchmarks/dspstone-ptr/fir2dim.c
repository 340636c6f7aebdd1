/* DSPstone-style fir2dim, pointer-walking form: a 3x3 filter over an image
 * (valid region), out[y][x] = sum_k sum_l coeff[3k + l] * image[y + k][x + l].
 * The image pointer steps to the next row after each filter row. */
#ifndef OH
#define OH 4
#endif
#ifndef OW
#define OW 4
#endif
#ifndef IH
#define IH 6
#endif
#ifndef IW
#define IW 6
#endif

typedef int TYPE;

void fir2dim(TYPE image[IH][IW], TYPE coeff[9], TYPE out[OH][OW])
{
    TYPE *p_img, *p_c;
    TYPE *p_out = &out[0][0];
    int y, x, k, l;

    for (y = 0; y < OH; y++) {
        for (x = 0; x < OW; x++) {
            p_img = &image[y][x];
            p_c = &coeff[0];
            *p_out = 0;
            for (k = 0; k < 3; k++) {
                for (l = 0; l < 3; l++)
                    *p_out += *p_c++ * *p_img++;
                p_img += IW - 3;
            }
            p_out++;
        }
    }
}
