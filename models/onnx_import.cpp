// ONNX graphs into Models (see onnx_import.hpp for the operator table and the rules).
//
// Nodes are read in the graph's order (ONNX requires a topological order). A first pass finds the fusions: a Mul
// of a tensor by its own Sigmoid (SiLU, as exporters write it), a MatMul whose only consumer adds a constant vector
// (a biased fully connected layer), a Softmax that produces the graph's output (folded into the loss). The second
// pass appends one layer per remaining node through ModelBuilder and checks its shape against ONNX's inference.
#include "models/onnx_import.hpp"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "models/builder.hpp"

namespace scaletwin::models {

namespace {

using Dims = std::vector<int64_t>;  // -1: unknown
constexpr int64_t kMaxFileBytes = int64_t{2} << 30;  // protobuf's own limit on one message

const char* kSupported =
    "Conv, Gemm, MatMul, BatchNormalization, Relu, Sigmoid, HardSwish, Mul, MaxPool, AveragePool, GlobalAveragePool, "
    "ReduceMean, Add, Concat, Flatten, Reshape, Dropout, Softmax, Identity, Squeeze, Unsqueeze, Constant";

Dims dims_of(const onnx::TypeProto& t) {
  Dims d;
  if (!t.has_tensor_type() || !t.tensor_type().has_shape()) return d;
  for (const auto& dim : t.tensor_type().shape().dim()) d.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  return d;
}

class Importer {
 public:
  Importer(const std::string& file, onnx::ModelProto& proto, const ModelOverrides& overrides)
      : file_(file), proto_(proto), g_(*proto.mutable_graph()), overrides_(overrides) {}

  Model run() {
    index_graph();
    const std::string data = data_input();
    set_input_override(data);
    infer_shapes();
    find_fusions();
    const Dims in = shape_of(data);
    if (in.size() != 4 || in[1] < 1 || in[2] < 1 || in[3] < 1)
      throw InputError(file_, "/graph/input/0",
                       fmt::format("an N×C×H×W image input \"{}\" with static C, H and W (got {} dimensions{})", data,
                                   in.size(), in.size() == 4 ? ", some unknown" : ""));
    std::string name = g_.name().empty() ? std::filesystem::path(file_).stem().string() : g_.name();
    builder_.emplace(name, Shape{in[1], in[2], in[3]}, classes(), file_);
    layer_of_[data] = builder_->input();
    for (int i = 0; i < g_.node_size(); ++i)
      if (!skipped_.count(i)) map_node(i);
    append_default_loss(*builder_, file_, "/graph/output");
    return builder_->build();
  }

 private:
  // --- the graph's tables ---
  void index_graph() {
    for (const auto& t : g_.initializer()) initializers_[t.name()] = &t;
    for (int i = 0; i < g_.node_size(); ++i) {
      for (const auto& out : g_.node(i).output()) producer_[out] = i;
      for (const auto& in : g_.node(i).input())
        if (!in.empty()) consumers_[in].push_back(i);
    }
    for (const auto& out : g_.output()) graph_outputs_.insert(out.name());
  }
  std::string data_input() const {
    for (const auto& in : g_.input())
      if (!initializers_.count(in.name())) return in.name();
    throw InputError(file_, "/graph/input", "a graph input that is not an initializer (the images)");
  }
  void set_input_override(const std::string& data) {
    if (!overrides_.input) return;
    for (auto& in : *g_.mutable_input()) {
      if (in.name() != data) continue;
      auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      while (shape->dim_size() < 4) shape->add_dim();
      const int64_t v[3] = {overrides_.input->c, overrides_.input->h, overrides_.input->w};
      for (int k = 0; k < 3; ++k) shape->mutable_dim(k + 1)->set_dim_value(v[k]);
    }
    g_.clear_value_info();  // shapes inferred for the old input would contradict the new one
    for (auto& out : *g_.mutable_output()) out.mutable_type()->mutable_tensor_type()->clear_shape();
  }
  void infer_shapes() {
    try {
      onnx::shape_inference::InferShapes(proto_);
    } catch (const std::exception& e) {
      throw InputError(file_, "/graph", fmt::format("a graph ONNX's shape inference accepts ({})", e.what()));
    }
    for (const auto& v : g_.value_info()) shapes_[v.name()] = dims_of(v.type());
    for (const auto& v : g_.input()) shapes_[v.name()] = dims_of(v.type());
    for (const auto& v : g_.output()) shapes_[v.name()] = dims_of(v.type());
    for (const auto& [name, t] : initializers_) shapes_[name] = Dims(t->dims().begin(), t->dims().end());
  }
  Dims shape_of(const std::string& tensor) const {
    auto it = shapes_.find(tensor);
    return it == shapes_.end() ? Dims{} : it->second;
  }
  bool is_constant(const std::string& tensor) const {
    if (initializers_.count(tensor)) return true;
    auto p = producer_.find(tensor);
    return p != producer_.end() && g_.node(p->second).op_type() == "Constant";
  }
  int only_consumer(const std::string& tensor) const {
    auto it = consumers_.find(tensor);
    return it != consumers_.end() && it->second.size() == 1 && !graph_outputs_.count(tensor) ? it->second[0] : -1;
  }

  // --- pass 1: fusions ---
  void find_fusions() {
    for (int i = 0; i < g_.node_size(); ++i) {
      const auto& n = g_.node(i);
      if (n.op_type() == "Mul" && n.input_size() == 2) {
        for (int k = 0; k < 2; ++k) {
          auto p = producer_.find(n.input(k));
          if (p == producer_.end() || g_.node(p->second).op_type() != "Sigmoid") continue;
          if (g_.node(p->second).input(0) != n.input(1 - k)) continue;
          silu_input_[i] = n.input(1 - k);
          if (only_consumer(n.input(k)) == i) skipped_.insert(p->second);
          break;
        }
      }
      if (n.op_type() == "MatMul" && n.output_size() == 1) {
        const int add = only_consumer(n.output(0));
        if (add < 0 || g_.node(add).op_type() != "Add") continue;
        const auto& a = g_.node(add);
        const std::string other = a.input(0) == n.output(0) ? a.input(1) : a.input(0);
        if (!is_constant(other) || shape_of(other).size() != 1) continue;
        matmul_bias_[i] = add;
        skipped_.insert(add);
        alias_[a.output(0)] = n.output(0);
      }
      if (n.op_type() == "Softmax" && graph_outputs_.count(n.output(0))) {
        skipped_.insert(i);
        logits_ = n.input(0);
      }
    }
  }
  int64_t classes() {
    if (logits_.empty() && g_.output_size() > 0) logits_ = g_.output(0).name();
    for (auto a = alias_.find(logits_); a != alias_.end(); a = alias_.find(logits_)) logits_ = a->second;
    const Dims d = shape_of(logits_);
    int64_t features = 1;
    for (size_t k = 1; k < d.size(); ++k) features = d[k] > 0 ? features * d[k] : -1;
    if (overrides_.classes) return *overrides_.classes;
    if (d.size() < 2 || features < 1)
      throw InputError(file_, "/graph/output/0",
                       fmt::format("logits \"{}\" of a static N × classes shape (ONNX's shape inference gives {} "
                                   "dimensions, some unknown)",
                                   logits_, d.size()));
    return features;
  }

  // --- pass 2: layers ---
  std::string node_path(int i) const { return fmt::format("/graph/node/{}", i); }
  [[noreturn]] void fail(int i, const std::string& expected) const {
    const auto& n = g_.node(i);
    throw InputError(file_, node_path(i),
                     fmt::format("{} (node \"{}\", op type {})", expected, n.name().empty() ? n.output(0) : n.name(),
                                 n.op_type()));
  }
  const onnx::AttributeProto* attribute(int i, const std::string& name) const {
    for (const auto& a : g_.node(i).attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  int64_t int_attr(int i, const std::string& name, int64_t fallback) const {
    const auto* a = attribute(i, name);
    return a ? a->i() : fallback;
  }
  float float_attr(int i, const std::string& name, float fallback) const {
    const auto* a = attribute(i, name);
    return a ? a->f() : fallback;
  }
  Dims ints_attr(int i, const std::string& name, Dims fallback) const {
    const auto* a = attribute(i, name);
    return a ? Dims(a->ints().begin(), a->ints().end()) : fallback;
  }
  std::string layer_name(int i) {
    const auto& n = g_.node(i);
    std::string base = n.name().empty() ? n.output(0) : n.name();
    if (base.empty()) base = fmt::format("node{}", i);
    std::string name = base;
    for (int k = 2; builder_->model().index_of(name) >= 0; ++k) name = fmt::format("{}_{}", base, k);
    return name;
  }
  int layer_input(int i, int k) {
    std::string t = g_.node(i).input(k);
    for (auto a = alias_.find(t); a != alias_.end(); a = alias_.find(t)) t = a->second;
    auto it = layer_of_.find(t);
    if (it == layer_of_.end())
      fail(i, fmt::format("inputs that come from mapped nodes or the image input (tensor \"{}\" comes from neither)", t));
    return it->second;
  }
  Dims weight_dims(int i, int k) const {
    const std::string& t = g_.node(i).input(k);
    const Dims d = shape_of(t);
    if (d.empty() || std::any_of(d.begin(), d.end(), [](int64_t v) { return v < 1; }))
      fail(i, fmt::format("weights \"{}\" of a static shape (an initializer or a graph input with known dims)", t));
    return d;
  }
  // Symmetric padding of a 2-D window: ONNX pads are [top, left, bottom, right]; auto_pad SAME_* pads in + k to a
  // multiple of the stride (even totals only).
  std::pair<int64_t, int64_t> padding(int i, const Dims& in, const Dims& kernel, const Dims& stride,
                                      const Dims& dilation) const {
    const auto* ap = attribute(i, "auto_pad");
    const std::string mode = ap ? ap->s() : "NOTSET";
    int64_t pad[4] = {0, 0, 0, 0};
    if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      for (int a = 0; a < 2; ++a) {
        const int64_t size = in[static_cast<size_t>(a + 2)], s = stride[static_cast<size_t>(a)];
        const int64_t extent = (kernel[static_cast<size_t>(a)] - 1) * dilation[static_cast<size_t>(a)] + 1;
        const int64_t total = std::max<int64_t>(((size + s - 1) / s - 1) * s + extent - size, 0);
        pad[a] = total / 2;
        pad[a + 2] = total - total / 2;
      }
    } else if (mode == "NOTSET") {
      const Dims p = ints_attr(i, "pads", {0, 0, 0, 0});
      if (p.size() != 4) fail(i, fmt::format("2-D pads [top, left, bottom, right] (got {} values)", p.size()));
      std::copy(p.begin(), p.end(), pad);
    } else if (mode != "VALID") {
      fail(i, fmt::format("auto_pad NOTSET, VALID, SAME_UPPER or SAME_LOWER (got {})", mode));
    }
    if (pad[0] != pad[2] || pad[1] != pad[3])
      fail(i, fmt::format("symmetric padding (got top {}, left {}, bottom {}, right {}: scaletwin's layers pad both "
                          "sides alike)",
                          pad[0], pad[1], pad[2], pad[3]));
    return {pad[0], pad[1]};
  }
  Dims two(int i, const std::string& name, int64_t fallback) const {
    const Dims d = ints_attr(i, name, {fallback, fallback});
    if (d.size() != 2) fail(i, fmt::format("a 2-D {} (got {} values)", name, d.size()));
    return d;
  }

  int map_conv(int i, const std::string& name) {
    const Dims w = weight_dims(i, 1);
    if (w.size() != 4) fail(i, fmt::format("a 2-D convolution (weights of 4 dimensions, got {})", w.size()));
    const Dims stride = two(i, "strides", 1), dilation = two(i, "dilations", 1);
    const Dims kernel = ints_attr(i, "kernel_shape", {w[2], w[3]});
    if (kernel != Dims{w[2], w[3]}) fail(i, "kernel_shape equal to the weights' spatial dims");
    const int x = layer_input(i, 0);
    const Shape& s = builder_->shape(x);
    const auto [ph, pw] = padding(i, {1, s.c, s.h, s.w}, kernel, stride, dilation);
    ConvParams p;
    p.out_channels = w[0];
    p.kernel_h = w[2], p.kernel_w = w[3], p.stride_h = stride[0], p.stride_w = stride[1];
    p.pad_h = ph, p.pad_w = pw, p.dilation_h = dilation[0], p.dilation_w = dilation[1];
    p.groups = int_attr(i, "group", 1);
    p.bias = g_.node(i).input_size() > 2 && !g_.node(i).input(2).empty();
    if (p.groups < 1 || w[1] * p.groups != s.c)
      fail(i, fmt::format("weights of {} input channels per group for {} channels in {} groups (got {})",
                          s.c / std::max<int64_t>(p.groups, 1), s.c, p.groups, w[1]));
    return builder_->conv(name, x, p);
  }
  int map_fc(int i, const std::string& name, bool gemm) {
    if (gemm && (int_attr(i, "transA", 0) != 0 || float_attr(i, "alpha", 1.0f) != 1.0f ||
                 float_attr(i, "beta", 1.0f) != 1.0f))
      fail(i, "Gemm with transA 0, alpha 1 and beta 1 (a fully connected layer)");
    const Dims w = weight_dims(i, 1);
    if (w.size() != 2) fail(i, fmt::format("2-D weights (got {} dimensions)", w.size()));
    const bool trans_b = gemm && int_attr(i, "transB", 0) != 0;
    const int64_t in = trans_b ? w[1] : w[0];
    int64_t out = trans_b ? w[0] : w[1];
    const int x = layer_input(i, 0);
    if (builder_->shape(x).elements() != in)
      fail(i, fmt::format("weights for {} input features (the input has {})", builder_->shape(x).elements(), in));
    const bool bias = gemm ? g_.node(i).input_size() > 2 && !g_.node(i).input(2).empty() : matmul_bias_.count(i) > 0;
    if (overrides_.classes && g_.node(i).output(0) == logits_) out = *overrides_.classes;
    return builder_->fc(name, x, out, bias);
  }
  int map_pool(int i, const std::string& name, bool max) {
    const Dims kernel = two(i, "kernel_shape", 0);
    const Dims stride = two(i, "strides", 1);
    if (max && two(i, "dilations", 1) != Dims{1, 1}) fail(i, "max pooling without dilation");
    const int x = layer_input(i, 0);
    const Shape& s = builder_->shape(x);
    const auto [ph, pw] = padding(i, {1, s.c, s.h, s.w}, kernel, stride, {1, 1});
    PoolParams p;
    p.kernel_h = kernel[0], p.kernel_w = kernel[1], p.stride_h = stride[0], p.stride_w = stride[1];
    p.pad_h = ph, p.pad_w = pw;
    p.ceil_mode = int_attr(i, "ceil_mode", 0) != 0;
    if (!max) p.count_include_pad = int_attr(i, "count_include_pad", 0) != 0;
    return max ? builder_->maxpool(name, x, p) : builder_->avgpool(name, x, p);
  }
  int map_mul(int i, const std::string& name) {
    const auto& n = g_.node(i);
    if (silu_input_.count(i)) {
      const std::string x = silu_input_[i];
      for (int k = 0; k < 2; ++k)
        if (n.input(k) == x) return builder_->silu(name, layer_input(i, k));
    }
    if (is_constant(n.input(0)) || is_constant(n.input(1))) fail(i, "a Mul of two computed tensors (not by a constant)");
    int a = layer_input(i, 0), b = layer_input(i, 1);
    if (builder_->shape(a).elements() < builder_->shape(b).elements()) std::swap(a, b);  // the scale second
    return builder_->mul(name, a, b);
  }
  double dropout_rate(int i) const {
    const auto& n = g_.node(i);
    if (n.input_size() > 1 && !n.input(1).empty()) {
      auto it = initializers_.find(n.input(1));
      if (it == initializers_.end() || it->second->float_data_size() + it->second->raw_data().size() == 0)
        fail(i, "a dropout ratio given as a float initializer");
      const auto* t = it->second;
      if (t->float_data_size() > 0) return t->float_data(0);
      float v = 0.0f;
      if (t->raw_data().size() < sizeof v) fail(i, "a float ratio");
      std::memcpy(&v, t->raw_data().data(), sizeof v);
      return v;
    }
    return float_attr(i, "ratio", 0.5f);
  }
  // The rank a Reshape produces: from ONNX's inferred output shape, else from its constant shape tensor.
  size_t reshape_rank(int i) const {
    const Dims out = shape_of(g_.node(i).output(0));
    if (!out.empty()) return out.size();
    const Dims target = shape_of(g_.node(i).input(1));  // the shape tensor is 1-D: its length is the rank
    if (target.size() == 1 && target[0] > 0) return static_cast<size_t>(target[0]);
    auto p = producer_.find(g_.node(i).input(1));
    if (p != producer_.end() && g_.node(p->second).op_type() == "Constant")
      if (const auto* a = attribute(p->second, "value"); a && a->has_t() && a->t().dims_size() == 1)
        return static_cast<size_t>(a->t().dims(0));
    return 0;
  }
  bool spatial_ones_only(const Dims& a, const Dims& b) const {  // the same dims up to 1s after the first two
    auto strip = [](Dims d) {
      while (d.size() > 2 && d.back() == 1) d.pop_back();
      return d;
    };
    return !a.empty() && strip(a) == strip(b);
  }

  // One node: its layer (or an alias of its input), then ONNX's shape of its output against the layer's.
  void map_node(int i) {
    const auto& n = g_.node(i);
    const std::string& op = n.op_type();
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      fail(i, fmt::format("an operator of the default ONNX domain (got domain \"{}\"; supported: {})", n.domain(),
                          kSupported));
    if (op == "Constant") return;
    if (op == "Identity" || ((op == "Squeeze" || op == "Unsqueeze") &&
                             spatial_ones_only(shape_of(n.input(0)), shape_of(n.output(0))))) {
      alias_[n.output(0)] = n.input(0);
      return;
    }
    const std::string name = layer_name(i);
    int layer = -1;
    if (op == "Conv") layer = map_conv(i, name);
    else if (op == "Gemm" || op == "MatMul") layer = map_fc(i, name, op == "Gemm");
    else if (op == "BatchNormalization")
      layer = builder_->batchnorm(name, layer_input(i, 0), float_attr(i, "epsilon", 1e-5f),
                                  1.0 - float_attr(i, "momentum", 0.9f));
    else if (op == "Relu") layer = builder_->relu(name, layer_input(i, 0));
    else if (op == "Sigmoid") layer = builder_->sigmoid(name, layer_input(i, 0));
    else if (op == "HardSwish") layer = builder_->hardswish(name, layer_input(i, 0));
    else if (op == "MaxPool" || op == "AveragePool") layer = map_pool(i, name, op == "MaxPool");
    else if (op == "GlobalAveragePool") layer = builder_->global_avgpool(name, layer_input(i, 0));
    else if (op == "ReduceMean") {
      Dims axes = ints_attr(i, "axes", {});
      for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
      std::sort(axes.begin(), axes.end());
      if (axes != Dims{2, 3}) fail(i, "a ReduceMean over the spatial axes [2, 3] (a global average pool)");
      layer = builder_->global_avgpool(name, layer_input(i, 0));
    } else if (op == "Add") {
      if (is_constant(n.input(0)) || is_constant(n.input(1)))
        fail(i, "an Add of two computed tensors, or of a MatMul's output and its bias vector");
      layer = builder_->add(name, {layer_input(i, 0), layer_input(i, 1)});
    } else if (op == "Mul") layer = map_mul(i, name);
    else if (op == "Concat") {
      const int64_t axis = int_attr(i, "axis", 1);
      if (axis != 1 && axis != -3) fail(i, fmt::format("a Concat along the channels (axis 1, got {})", axis));
      std::vector<int> from;
      for (int k = 0; k < n.input_size(); ++k) from.push_back(layer_input(i, k));
      layer = builder_->concat(name, from);
    } else if (op == "Flatten" || op == "Reshape") {
      const size_t rank = op == "Reshape" ? reshape_rank(i) : 0;
      if ((op == "Flatten" && int_attr(i, "axis", 1) != 1) || (op == "Reshape" && rank != 2))
        fail(i, "a flatten to N × features (Flatten axis 1, or a Reshape to 2 dimensions)");
      layer = builder_->flatten(name, layer_input(i, 0));
    } else if (op == "Dropout") layer = builder_->dropout(name, layer_input(i, 0), dropout_rate(i));
    else fail(i, fmt::format("an operator scaletwin maps ({})", kSupported));
    layer_of_[n.output(0)] = layer;
    check_shape(i, layer);
  }
  void check_shape(int i, int layer) const {
    if (overrides_.classes && g_.node(i).output(0) == logits_) return;  // ONNX infers the file's classes
    const Dims d = shape_of(g_.node(i).output(0));
    if (d.size() < 2 || std::any_of(d.begin() + 1, d.end(), [](int64_t v) { return v < 1; })) return;  // unknown
    const Shape& s = builder_->shape(layer);
    const bool same = d.size() == 4 ? (Shape{d[1], d[2], d[3]} == s) : [&] {
      int64_t e = 1;
      for (size_t k = 1; k < d.size(); ++k) e *= d[k];
      return e == s.elements();
    }();
    if (!same)
      fail(i, fmt::format("the output shape ONNX infers ({} values per sample{}) to equal the layer's ({}×{}×{})",
                          [&] {
                            int64_t e = 1;
                            for (size_t k = 1; k < d.size(); ++k) e *= d[k];
                            return e;
                          }(),
                          d.size() == 4 ? fmt::format(": {}×{}×{}", d[1], d[2], d[3]) : std::string(), s.c, s.h,
                          s.w));
  }

  std::string file_;
  onnx::ModelProto& proto_;
  onnx::GraphProto& g_;
  ModelOverrides overrides_;
  std::optional<ModelBuilder> builder_;
  std::map<std::string, const onnx::TensorProto*> initializers_;
  std::map<std::string, Dims> shapes_;
  std::map<std::string, int> producer_;
  std::map<std::string, std::vector<int>> consumers_;
  std::set<std::string> graph_outputs_;
  std::set<int> skipped_;
  std::map<int, std::string> silu_input_;  // Mul node → x of Mul(x, Sigmoid(x))
  std::map<int, int> matmul_bias_;         // MatMul node → its bias Add
  std::map<std::string, std::string> alias_;
  std::map<std::string, int> layer_of_;
  std::string logits_;
};

}  // namespace

Model load_onnx_model(const std::string& path, const ModelOverrides& overrides) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path, "", "a readable ONNX file (a regular file; it does not exist or is not one)");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || static_cast<int64_t>(size) > kMaxFileBytes)
    throw InputError(path, "", fmt::format("an ONNX file of at most 2 GiB (protobuf's limit; got {} bytes)", size));
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto proto;
  if (!in || !proto.ParseFromIstream(&in) || !proto.has_graph())
    throw InputError(path, "", "an ONNX model (a serialised onnx.ModelProto with a graph)");
  return Importer(path, proto, overrides).run();
}

}  // namespace scaletwin::models
