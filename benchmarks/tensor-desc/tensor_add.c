/* A tensor descriptor as tensor compilers emit it: rank, extents and an
 * untyped data pointer. out = a + b over a 2-D tensor, descriptors passed
 * by pointer; the element type comes from the cast at use. */
struct tensor {
    int ndim;
    int *dims;
    void *vals;
};

void tensor_add(struct tensor *a, struct tensor *b, struct tensor *out)
{
    for (int i = 0; i < a->dims[0]; i++)
        for (int j = 0; j < a->dims[1]; j++)
            ((double *)(out->vals))[i * a->dims[1] + j] =
                ((double *)(a->vals))[i * a->dims[1] + j] + ((double *)(b->vals))[i * a->dims[1] + j];
}
