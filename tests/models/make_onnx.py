#!/usr/bin/python3
"""Writes the ONNX files of tests/models/test_onnx.cpp with Debian's python3-onnx (run by the test itself).

    make_onnx.py DIR NAME...    writes DIR/NAME.onnx for each NAME below

One small network per operator scaletwin maps (images N x 3 x 8 x 8, a stem convolution, the operator, then global
average pool, flatten and a fully connected classifier of 10 classes); files that must be refused; and ResNet-50
as torchvision defines it (v1.5, every convolution without bias followed by batch normalization), its weights as
zero-filled initializers, as an exporter writes them.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 14  # HardSwish is opset 14


class Net:
    def __init__(self, channels=3, size=8, batch="N"):
        self.nodes, self.inits, self.count = [], [], 0
        self.inputs = [helper.make_tensor_value_info("images", TensorProto.FLOAT, [batch, channels, size, size])]

    def name(self, stem):
        self.count += 1
        return f"{stem}{self.count}"

    def weight(self, shape):
        n = self.name("w")
        self.inits.append(numpy_helper.from_array(np.zeros(shape, dtype=np.float32), n))
        return n

    def node(self, op, inputs, outputs=1, **attrs):
        outs = [self.name(op.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=self.name(op + "_"), **attrs))
        return outs[0]

    def conv(self, x, cin, cout, k, stride=1, pad=None, group=1, bias=False):
        pad = k // 2 if pad is None else pad
        ins = [x, self.weight([cout, cin // group, k, k])] + ([self.weight([cout])] if bias else [])
        return self.node("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=group)

    def bn(self, x, c):
        return self.node("BatchNormalization", [x] + [self.weight([c]) for _ in range(4)], epsilon=1e-5)

    def head(self, x, c, classes=10, softmax=False):
        x = self.node("Flatten", [self.node("GlobalAveragePool", [x])], axis=1)
        y = self.node("Gemm", [x, self.weight([classes, c]), self.weight([classes])], transB=1)
        if softmax:
            y = self.node("Softmax", [y], axis=1)
        return y

    def save(self, path, output):
        graph = helper.make_graph(self.nodes, "test", self.inputs,
                                  [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        onnx.save(model, path)


def stem(net):
    return net.conv("images", 3, 8, 3)


def single(op_builder, softmax=False):
    def build(path):
        net = Net()
        x, c = op_builder(net, stem(net))
        net.save(path, net.head(x, c, softmax=softmax))
    return build


def with_consts(net, value, dtype=np.int64):
    n = net.name("const")
    net.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), n))
    return n


FILES = {
    "conv": single(lambda n, x: (n.conv(x, 8, 16, 3, stride=2, pad=1, group=4, bias=True), 16)),
    "batchnorm": single(lambda n, x: (n.bn(x, 8), 8)),
    "relu": single(lambda n, x: (n.node("Relu", [x]), 8)),
    "sigmoid": single(lambda n, x: (n.node("Sigmoid", [x]), 8)),
    "silu": single(lambda n, x: (n.node("Mul", [x, n.node("Sigmoid", [x])]), 8)),
    "hardswish": single(lambda n, x: (n.node("HardSwish", [x]), 8)),
    "maxpool": single(lambda n, x: (n.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4), 8)),
    "avgpool": single(lambda n, x: (n.node("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2]), 8)),
    "add": single(lambda n, x: (n.node("Add", [x, n.conv(x, 8, 8, 1)]), 8)),
    "mul": single(lambda n, x: (n.node("Mul", [x, n.node("Sigmoid", [n.conv(n.node("GlobalAveragePool", [x]), 8, 8, 1,
                                                                                   bias=True)])]), 8)),
    "concat": single(lambda n, x: (n.node("Concat", [x, n.conv(x, 8, 4, 1)], axis=1), 12)),
    "dropout": single(lambda n, x: (n.node("Dropout", [x, with_consts(n, 0.25, np.float32)]), 8)),
    "softmax": single(lambda n, x: (x, 8), softmax=True),
}


def head_variant(kind):
    def build(path):
        net = Net()
        x = net.node("GlobalAveragePool", [stem(net)])
        if kind == "reshape":
            x = net.node("Reshape", [x, with_consts(net, [-1, 8])])
        else:
            x = net.node("Flatten", [x], axis=1)
        if kind == "matmul":
            y = net.node("Add", [net.node("MatMul", [x, net.weight([8, 10])]), net.weight([10])])
        else:
            y = net.node("Gemm", [x, net.weight([10, 8]), net.weight([10])], transB=1)
        net.save(path, y)
    return build


FILES.update({"gemm": head_variant("gemm"), "flatten": head_variant("flatten"), "matmul": head_variant("matmul"),
              "reshape": head_variant("reshape")})


def refused(kind):
    def build(path):
        net = Net()
        x = stem(net)
        if kind == "unsupported":
            x = net.node("LRN", [x], size=3)
        elif kind == "asymmetric":
            x = net.node("Conv", [x, net.weight([8, 8, 2, 2])], kernel_shape=[2, 2], pads=[0, 0, 1, 1])
        net.save(path, net.head(x, 8))
    return build


FILES.update({"unsupported": refused("unsupported"), "asymmetric": refused("asymmetric")})


def resnet50(path):
    net = Net(size=224)
    x = net.node("Relu", [net.bn(net.conv("images", 3, 64, 7, stride=2, pad=3), 64)])
    x = net.node("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4)
    cin = 64
    for stage, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)]):
        for block in range(blocks):
            stride = 2 if stage > 0 and block == 0 else 1
            y = net.node("Relu", [net.bn(net.conv(x, cin, width, 1), width)])
            y = net.node("Relu", [net.bn(net.conv(y, width, width, 3, stride=stride), width)])
            y = net.bn(net.conv(y, width, 4 * width, 1), 4 * width)
            shortcut = x
            if stride != 1 or cin != 4 * width:
                shortcut = net.bn(net.conv(x, cin, 4 * width, 1, stride=stride), 4 * width)
            x = net.node("Relu", [net.node("Add", [y, shortcut])])
            cin = 4 * width
    net.save(path, net.head(x, 2048, classes=1000))


FILES["resnet50"] = resnet50

if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: make_onnx.py DIR NAME...  (names: " + ", ".join(FILES) + ")")
    for name in sys.argv[2:]:
        FILES[name](f"{sys.argv[1]}/{name}.onnx")
