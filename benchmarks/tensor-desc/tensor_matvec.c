/* y = A x with tensor descriptors passed by pointer; the matrix's shape is
 * nested (`mat->shape.dims[k]`), the data pointers are untyped. */
struct shape {
    int rank;
    int dims[4];
};

struct tensor {
    struct shape shape;
    void *vals;
};

void tensor_matvec(const struct tensor *mat, const struct tensor *x, struct tensor *y)
{
    for (int i = 0; i < mat->shape.dims[0]; i++) {
        double acc = 0.0;
        for (int j = 0; j < mat->shape.dims[1]; j++)
            acc += ((const double *)mat->vals)[i * mat->shape.dims[1] + j] * ((const double *)x->vals)[j];
        ((double *)y->vals)[i] = acc;
    }
}
