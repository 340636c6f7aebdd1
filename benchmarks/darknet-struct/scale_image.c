/* darknet's image type (src/image.h): w x h x c floats, channel-major,
 * in one buffer. scale_image multiplies every pixel value by s. */
typedef struct {
    int w;
    int h;
    int c;
    float *data;
} image;

void scale_image(image m, float s)
{
    int i;
    for (i = 0; i < m.h * m.w * m.c; ++i) m.data[i] *= s;
}
