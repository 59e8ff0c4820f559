"""TinyGPT：一个小而可读的 decoder-only Transformer（课程 5.6、5.7 练习 5 用）。

完整前向路径（5.6）：

    idx (B, T) 整数 token ID
      → token embedding + 位置 embedding      (B, T, C)
      → n_layer 个 Block（因果自注意力 + MLP，带残差与 LayerNorm）  (B, T, C)
      → 最终 LayerNorm：这就是进入 lm_head 的隐藏状态 hidden    (B, T, C)
      → lm_head（Linear(C, V)，无偏置）                          (B, T, V) logits

forward(idx) 只返回 logits (B, T, V)；要拿进入 lm_head 之前的隐藏状态，调用
model.hidden(idx)（于是 model(idx) == model.lm_head(model.hidden(idx))）。
这里故意没有 loss：labels 错位（make_lm_batch）、logits 展平成 (B*T, V)、
交叉熵（lm_loss）都是练习 ex05 要你自己写的部分。
为了可读与可复现，省掉了 dropout、权重共享和特殊初始化。

TinyGPT: a small, readable decoder-only Transformer for section 5.6 and 5.7 exercise 5.
Token + position embedding → causal self-attention blocks → final LayerNorm → lm_head.
forward(idx) returns the logits (B, T, V) only; model.hidden(idx) returns the hidden
state (B, T, C) that enters lm_head. There is no loss here on purpose: shifting the
labels, flattening the logits and the cross-entropy are exercise ex05. Left out for
readability: dropout, weight tying, special initialisation.

    >>> import torch
    >>> torch.manual_seed(42)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> model = TinyGPT(vocab_size=32, block_size=8, n_embd=8, n_head=2, n_layer=2)
    >>> idx = torch.tensor([[1, 4, 2, 8], [3, 2, 9, 1]])  # (B, T) = (2, 4)
    >>> tuple(model.hidden(idx).shape), tuple(model(idx).shape)
    ((2, 4, 8), (2, 4, 32))
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    """多头因果自注意力：位置 t 只看得见 0…t。 | Multi-head causal self-attention."""

    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError("n_embd 必须能被 n_head 整除 / n_embd must be divisible by n_head")
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)  # Q、K、V 三个投影合成一个
        self.c_proj = nn.Linear(n_embd, n_embd)  # 输出投影 O
        mask = torch.tril(torch.ones(block_size, block_size, dtype=torch.bool))  # (block_size, block_size)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head  # 每个头的维度 head size
        q, k, v = self.c_attn(x).split(C, dim=2)  # 各 (B, T, C)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)  # (B, nh, T, T)
        att = att.masked_fill(~self.mask[:T, :T], float("-inf"))  # (B, nh, T, T) 上三角（未来）置 -inf
        att = F.softmax(att, dim=-1)  # (B, nh, T, T) 注意力权重
        y = att @ v  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C) 各头拼回
        return self.c_proj(y)  # (B, T, C)


class MLP(nn.Module):
    """逐位置的前馈网络：C → 4C → C。 | Position-wise feed-forward, C → 4C → C."""

    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        x = self.c_fc(x)  # (B, T, 4C)
        x = F.gelu(x)  # (B, T, 4C)
        return self.c_proj(x)  # (B, T, C)


class Block(nn.Module):
    """一个 Transformer Block（pre-LayerNorm，带残差）。 | One pre-LN Transformer block."""

    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))  # (B, T, C)
        x = x + self.mlp(self.ln_2(x))  # (B, T, C)
        return x


class TinyGPT(nn.Module):
    """小型 decoder-only GPT：forward(idx) 返回 logits (B, T, V)，hidden(idx) 返回 (B, T, C)。

    English: a tiny decoder-only GPT; forward(idx) returns the logits (B, T, V) and
    hidden(idx) the hidden state (B, T, C) that enters lm_head.

    默认值对应 5.6 的设定：词表 V=32、隐藏维度 C=8。
    """

    def __init__(self, vocab_size=32, block_size=8, n_embd=8, n_head=2, n_layer=2):
        super().__init__()
        self.vocab_size = vocab_size
        self.block_size = block_size
        self.n_embd = n_embd
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)  # 可学习查表 [V, C]（5.1）
        self.position_embedding_table = nn.Embedding(block_size, n_embd)  # [block_size, C]
        self.blocks = nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)  # 最终 LayerNorm
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)  # LM Head：C → V

    def hidden(self, idx):
        """进入 lm_head 之前的隐藏状态 (B, T, C)。 | The hidden state entering lm_head."""
        B, T = idx.shape
        if T > self.block_size:
            raise ValueError(
                f"序列长度 {T} 超过 block_size {self.block_size} / "
                f"sequence length {T} exceeds block_size {self.block_size}"
            )
        tok_emb = self.token_embedding_table(idx)  # (B, T, C)
        pos = torch.arange(T, device=idx.device)  # (T,)
        pos_emb = self.position_embedding_table(pos)  # (T, C)
        x = tok_emb + pos_emb  # (B, T, C) 广播相加
        for block in self.blocks:
            x = block(x)  # (B, T, C)
        return self.ln_f(x)  # (B, T, C)

    def forward(self, idx):
        """idx (B, T) → logits (B, T, V)；不算 loss。 | ids (B, T) → logits (B, T, V); no loss."""
        h = self.hidden(idx)  # (B, T, C)
        logits = self.lm_head(h)  # (B, T, V)
        return logits
