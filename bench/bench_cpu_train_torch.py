"""The PyTorch peer of bench_cpu_train.py: training images/s of one model on random data, one JSON line out.

The models are those of ../shared/peers/torch_models.py, which match our zoo layer for layer (models/zoo.cpp,
models/zoo_resnet.cpp): lenet5 is conv 1→6 5×5 pad 2 (bias), relu, max pool 2, conv 6→16 5×5 (bias), relu, max
pool 2, fc 400→120→84→10 with relus; resnet18_cifar is the 3×3 stem (64, no bias) + batch norm + relu without max
pool, 4 stages of 2 basic blocks (64, 128, 256, 512; stride 2 on the first block of stages 2-4, 1×1 projection +
batch norm shortcut exactly there), global average pool, fc 512→10. Convolutions of the ResNet have no bias, batch
norm has eps 1e-5 and momentum 0.1 (both sides' defaults). The step is the same as ours: forward, mean
cross-entropy, backward, SGD with momentum 0.9, lr 0.01, no weight decay. Unlike torch_models.py the warm-up and
measured iteration counts are arguments, so that both sides time the same number of steps.

Usage: /usr/bin/python3 bench_cpu_train_torch.py MODEL BATCH THREADS WARMUP ITERATIONS
Run it with OPENBLAS_NUM_THREADS=1 (single-threaded OpenBLAS under PyTorch's own threads; see
../shared/peers/README.md). Prints {"model", "batch", "threads", "iterations", "images_per_sec", "torch"}.
"""
import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class LeNet5(nn.Module):
    def __init__(s):
        super().__init__()
        s.c1 = nn.Conv2d(1, 6, 5, padding=2)
        s.c2 = nn.Conv2d(6, 16, 5)
        s.f1 = nn.Linear(400, 120)
        s.f2 = nn.Linear(120, 84)
        s.f3 = nn.Linear(84, 10)

    def forward(s, x):
        x = F.max_pool2d(F.relu(s.c1(x)), 2)
        x = F.max_pool2d(F.relu(s.c2(x)), 2)
        return s.f3(F.relu(s.f2(F.relu(s.f1(x.flatten(1))))))


class Block(nn.Module):
    def __init__(s, cin, cout, stride):
        super().__init__()
        s.a = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        s.ba = nn.BatchNorm2d(cout)
        s.b = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        s.bb = nn.BatchNorm2d(cout)
        s.sc = (nn.Sequential() if stride == 1 and cin == cout else
                nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)))

    def forward(s, x):
        return F.relu(s.bb(s.b(F.relu(s.ba(s.a(x))))) + s.sc(x))


class ResNet18Cifar(nn.Module):
    def __init__(s):
        super().__init__()
        s.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
            cin = cout
        s.layers = nn.Sequential(*layers)
        s.fc = nn.Linear(512, 10)

    def forward(s, x):
        return s.fc(F.adaptive_avg_pool2d(s.layers(s.stem(x)), 1).flatten(1))


MODELS = {"lenet5": (LeNet5, (1, 28, 28)), "resnet18_cifar": (ResNet18Cifar, (3, 32, 32))}


def main():
    name, batch, threads, warmup, iterations = sys.argv[1], *map(int, sys.argv[2:6])
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    make, shape = MODELS[name]
    net = make()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, *shape)
    y = torch.randint(0, 10, (batch,))

    def step():
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()

    for _ in range(warmup):
        step()
    t = time.perf_counter()
    for _ in range(iterations):
        step()
    seconds = time.perf_counter() - t
    print(json.dumps({"model": name, "batch": batch, "threads": threads, "iterations": iterations,
                      "images_per_sec": batch * iterations / seconds, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
