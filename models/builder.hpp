// ModelBuilder: the one way to make a Model, used by the zoo (zoo.cpp) and by the JSON loader (model_json.cpp).
//
// Each method appends one layer and returns its index in Model::layers (the input layer is index 0). Shapes and
// costs are inferred as each layer is added, so an impossible shape fails at the layer that causes it, with an
// InputError naming the origin file and the JSON path of that layer. Paths count the layers after the input, as
// the "layers" array of a model file does: Model::layers[i] is "/layers/<i-1>".
//
//   ModelBuilder b("tiny", Shape{1, 28, 28}, 10);
//   int x = b.conv("conv1", b.input(), 6, 5, /*stride=*/1, /*pad=*/2, /*bias=*/true);
//   x = b.relu("relu1", x);
//   x = b.fc("fc", b.flatten("flat", x), b.classes());
//   b.softmax_cross_entropy("loss", x);
//   Model m = b.build();   // also checks that every layer's output is used
//
// Cost conventions (per sample; a multiply-add is 2 FLOPs; "e" is the number of output elements, "e_in" of input
// elements; bias terms add one FLOP per output element):
//   conv         fwd 2·Cout·Hout·Wout·(Cin/groups)·kh·kw (+bias)   bwd_input 2·(same MACs)   bwd_weight 2·MACs (+bias)
//   fc           fwd 2·in·out (+bias)                               bwd_input 2·in·out        bwd_weight 2·in·out (+bias)
//   batchnorm    fwd 8·e (mean 1, variance 3, normalise 2, scale and shift 2)
//                bwd_input 6·e, bwd_weight 3·e (Σdy·x̂ and Σdy for the scale and shift)
//   relu         fwd 1·e, bwd_input 1·e
//   maxpool      fwd kh·kw·e (comparisons), bwd_input 1·e (routing each gradient to its maximum)
//   avgpool      fwd kh·kw·e, bwd_input kh·kw·e
//   global_avgpool fwd e_in, bwd_input e_in
//   add          fwd (inputs−1)·e, bwd_input 0 (the gradient passes through unchanged)
//   concat, flatten, input   0 (copies and views)
//   dropout      fwd 1·e (the mask multiply), bwd_input 1·e
//   softmax_cross_entropy   fwd 5·e (max, subtract, exp, sum, divide), bwd_input 1·e (p − one-hot)
//   sigmoid      fwd 4·e, bwd_input 3·e (dy · y · (1 − y))
//   silu         fwd 5·e, bwd_input 9·e (dy · s · (1 + x · (1 − s)), the sigmoid s recomputed)
//   hardswish    fwd 4·e, bwd_input 3·e
//   mul          fwd 1·e, bwd_input 2·e (dx and ds), 3·e when the scale is C×1×1 (ds summed over the positions)
//   drop_path    fwd 1·e, bwd_input 1·e (one mask value per sample; stochastic depth)
// A layer whose only inputs are the model input has bwd_input_flops = 0: no framework computes the gradient of
// the data. activation_bytes is 4·e (fp32 output; the loss layer's output is the softmax probabilities, which its
// backward reads, so it has the shape of its input); weight_bytes is 4·params.
#pragma once

#include <string>
#include <vector>

#include "models/model.hpp"

namespace scaletwin::models {

class ModelBuilder {
 public:
  // origin: the file the model comes from, for error messages ("" for a built-in model: messages then say
  // "built-in model <name>"). classes must be >= 1; the input shape must be positive.
  ModelBuilder(std::string name, Shape input, int64_t classes, std::string origin = "");

  int input() const { return 0; }
  int last() const { return static_cast<int>(model_.layers.size()) - 1; }
  int64_t classes() const { return model_.classes; }
  const Shape& shape(int layer) const;
  const Model& model() const { return model_; }

  int conv(const std::string& name, int from, const ConvParams& p);
  // Square kernel, stride and padding; no dilation, no groups.
  int conv(const std::string& name, int from, int64_t out_channels, int64_t kernel, int64_t stride = 1,
           int64_t pad = 0, bool bias = false);
  int batchnorm(const std::string& name, int from, double eps = 1e-5, double momentum = 0.1);
  int relu(const std::string& name, int from);
  int maxpool(const std::string& name, int from, const PoolParams& p);
  int maxpool(const std::string& name, int from, int64_t kernel, int64_t stride, int64_t pad = 0,
              bool ceil_mode = false);
  int avgpool(const std::string& name, int from, const PoolParams& p);
  int avgpool(const std::string& name, int from, int64_t kernel, int64_t stride, int64_t pad = 0,
              bool ceil_mode = false, bool count_include_pad = true);
  int global_avgpool(const std::string& name, int from);
  int fc(const std::string& name, int from, int64_t out_features, bool bias = true);
  int add(const std::string& name, const std::vector<int>& from);     // element-wise sum (residual)
  int concat(const std::string& name, const std::vector<int>& from);  // along channels
  int dropout(const std::string& name, int from, double rate = 0.5);
  int flatten(const std::string& name, int from);
  int softmax_cross_entropy(const std::string& name, int from);
  int sigmoid(const std::string& name, int from);
  int silu(const std::string& name, int from);
  int hardswish(const std::string& name, int from);
  int mul(const std::string& name, int from, int scale);  // from · scale (scale: from's shape, or C×1×1)
  int drop_path(const std::string& name, int from, double rate);

  // Appends a layer whose name, kind, inputs and kind parameters are set (costs are computed here).
  int add_layer(Layer layer);

  // The finished model. Throws InputError when a layer other than the last has no consumer.
  Model build() const;

 private:
  Model model_;
  std::string origin_;
};

// Shape inference and costs of layers[index] from its inputs (already inferred). Throws InputError naming `origin`
// and the layer's JSON path when the layer is impossible. Used by ModelBuilder; exposed so that code which edits
// a Model (e.g. a test) can recompute it.
void infer_layer(Model& model, int index, const std::string& origin);
// Re-runs infer_layer on every layer (layers[0] must be the input layer) and the graph checks of build().
void infer_model(Model& model, const std::string& origin);
// "/layers/<index-1>" for index >= 1, "/input" for 0.
std::string layer_json_path(int index);

}  // namespace scaletwin::models
