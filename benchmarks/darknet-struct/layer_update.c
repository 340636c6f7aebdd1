/* darknet's update_connected_layer step for the biases, axpy over layer
 * fields: biases += (learning_rate / batch) * bias_updates, then the
 * updates decay by momentum. */
typedef struct layer {
    int batch;
    int inputs, outputs;
    float *biases;
    float *bias_updates;
    float *output;
    void (*forward)(struct layer l);
} layer;

void update_bias(layer l, float learning_rate, float momentum)
{
    int i;
    for (i = 0; i < l.outputs; ++i) {
        l.biases[i] += (learning_rate / l.batch) * l.bias_updates[i];
        l.bias_updates[i] *= momentum;
    }
}
