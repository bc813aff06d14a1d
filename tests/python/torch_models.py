# The six seed operators and a decoder block written the usual PyTorch way,
# shared by the lanejit.torch tests and python/bench/torch_compile.py.
import math

import torch
import torch.nn.functional as F


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope(x, cos, sin):  # Hugging Face apply_rotary_pos_emb, one tensor
    return x * cos + rotate_half(x) * sin


class LayerNorm(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.weight = torch.nn.Parameter(1 + 0.2 * torch.cos(0.113 * torch.arange(c)))
        self.bias = torch.nn.Parameter(0.1 * torch.sin(0.071 * torch.arange(c)))

    def forward(self, x):
        return F.layer_norm(x, (x.shape[-1],), self.weight, self.bias, 1e-5)


def swiglu(g, u):
    return F.silu(g) * u


def gelu_residual(x, r):
    return F.gelu(x, approximate="tanh") + r


def masked_softmax(scores):
    mask = torch.ones_like(scores, dtype=torch.bool).triu(1)
    return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)


class RMSNorm(torch.nn.Module):
    def __init__(self, c, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(1 + 0.2 * torch.cos(0.113 * torch.arange(c)))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class DecoderBlock(torch.nn.Module):
    """Llama-style: RMSNorm, attention with RoPE and a causal softmax,
    residual, RMSNorm, SwiGLU MLP, residual. The matmuls stay torch."""

    def __init__(self, c=64, heads=4, hidden=172):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = RMSNorm(c), RMSNorm(c)
        self.qkv = torch.nn.Linear(c, 3 * c, bias=False)
        self.o = torch.nn.Linear(c, c, bias=False)
        self.gate = torch.nn.Linear(c, hidden, bias=False)
        self.up = torch.nn.Linear(c, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, c, bias=False)

    def forward(self, x, cos, sin):
        b, t, c = x.size(0), x.size(1), x.size(2)
        d = c // self.heads
        qkv = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = [qkv[i].view(b, t, self.heads, d).transpose(1, 2) for i in range(3)]
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        att = masked_softmax((q @ k.transpose(-2, -1)) / math.sqrt(d))
        x = x + self.o((att @ v).transpose(1, 2).reshape(b, t, c))
        h = self.norm2(x)
        return x + self.down(swiglu(self.gate(h), self.up(h)))


def fixture(shape, scale=1.7, freq=0.173, trig=torch.sin):
    """The seed's deterministic fixtures: scale * trig(freq * i) over the flat index."""
    n = math.prod(shape)
    i = torch.arange(n, dtype=torch.float64)
    return (scale * trig(freq * i)).float().reshape(shape)


def seed_cases(rows, cols):
    """(name, fn, args) for the six seed operators at rows x cols (RoPE at
    cols + 1 when cols is odd, so C is even and C/2 odd)."""
    x = fixture((rows, cols))
    u = fixture((rows, cols), 0.9, 0.031, torch.cos)
    rc = cols + (cols % 2)
    xr = fixture((rows, rc))
    cos = fixture((rows, rc), 1.0, 0.013, torch.cos)
    sin = fixture((rows, rc), 1.0, 0.013, torch.sin)
    return [("rope", rope, (xr, cos, sin)),
            ("layernorm", LayerNorm(cols), (x,)),
            ("swiglu", swiglu, (x, u)),
            ("rmsnorm", RMSNorm(cols), (x,)),
            ("gelu_residual", gelu_residual, (x, u)),
            ("masked_softmax", masked_softmax, (x,))]
