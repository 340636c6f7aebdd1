/* A subset of darknet's `layer` struct passed by value, as in
 * forward_connected_layer: each of the batch's output vectors gets the
 * layer's biases added (add_bias with size 1). The function-pointer field
 * is never used, so it does not matter. */
typedef struct layer {
    int batch;
    int inputs, outputs;
    float *biases;
    float *bias_updates;
    float *output;
    void (*forward)(struct layer l);
} layer;

void forward_bias(layer l)
{
    int b, i;
    for (b = 0; b < l.batch; ++b) {
        for (i = 0; i < l.outputs; ++i) {
            l.output[b * l.outputs + i] += l.biases[i];
        }
    }
}
