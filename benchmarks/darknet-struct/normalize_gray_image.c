/* Normalises a single-channel darknet image passed by pointer:
 * (x - mean) / std for every pixel, addressed as darknet's get_pixel does
 * for channel 0 (index y*w + x). */
typedef struct {
    int w;
    int h;
    int c;
    float *data;
} image;

void normalize_gray_image(image *im, float mean, float std)
{
    int x, y;
    for (y = 0; y < im->h; ++y) {
        for (x = 0; x < im->w; ++x) {
            im->data[y * im->w + x] = (im->data[y * im->w + x] - mean) / std;
        }
    }
}
