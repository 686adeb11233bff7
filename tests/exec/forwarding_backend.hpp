// A Backend that hands every call to another one (owned); tests derive from it and override the calls they watch
// or change (test_network_layout.cpp: plain activations; test_trainer_device.cpp: a recording "device").
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "exec/backend.hpp"

namespace scaletwin::test {

class ForwardingBackend : public exec::Backend {
 public:
  explicit ForwardingBackend(std::unique_ptr<exec::Backend> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  exec::Buffer alloc(int64_t floats) override { return inner_->alloc(floats); }
  void upload(float* dst, const float* src, int64_t n) override { inner_->upload(dst, src, n); }
  void download(float* dst, const float* src, int64_t n) override { inner_->download(dst, src, n); }
  void synchronize() override { inner_->synchronize(); }
  std::unique_ptr<exec::LayerKernel> make_layer(const exec::LayerDesc& desc) override { return inner_->make_layer(desc); }
  int activation_block() const override { return inner_->activation_block(); }
  void copy(float* dst, const float* src, int64_t n) override { inner_->copy(dst, src, n); }
  void fill(float* dst, float value, int64_t n) override { inner_->fill(dst, value, n); }
  void add(float* dst, const float* src, int64_t n) override { inner_->add(dst, src, n); }
  void scale(float* dst, float factor, int64_t n) override { inner_->scale(dst, factor, n); }
  void copy_2d(float* dst, int64_t dst_ld, const float* src, int64_t src_ld, int64_t rows, int64_t cols) override {
    inner_->copy_2d(dst, dst_ld, src, src_ld, rows, cols);
  }
  void sgd_update(float* w, const float* g, float* m, int64_t n, const exec::SgdStep& step) override {
    inner_->sgd_update(w, g, m, n, step);
  }
  int64_t mark() override { return inner_->mark(); }
  double mark_time_s(int64_t mark) override { return inner_->mark_time_s(mark); }

 private:
  std::unique_ptr<exec::Backend> inner_;
};

}  // namespace scaletwin::test
