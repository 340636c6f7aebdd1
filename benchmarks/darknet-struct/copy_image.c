/* darknet's copy_image_into: copies the pixels of src into dest (same
 * shape), both images passed by value. */
typedef struct {
    int w;
    int h;
    int c;
    float *data;
} image;

void copy_image_into(image src, image dest)
{
    int i;
    for (i = 0; i < src.h * src.w * src.c; ++i) dest.data[i] = src.data[i];
}
