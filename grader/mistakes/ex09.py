"""ex09 bigram 模型的已知错误 / known mistakes of the bigram model."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from grader.judge.mistakes import Mistake


class _Base(nn.Module):
    """正确的 bigram，各错误只改一处 / a correct bigram; each mistake changes one thing."""

    def __init__(self, vocab_size):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

    def _loss(self, logits, targets):
        B, T, C = logits.shape
        return F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

    def forward(self, idx, targets=None):
        logits = self.token_embedding_table(idx)  # (B, T, C)
        if targets is None:
            return logits, None
        return logits, self._loss(logits, targets)

    def _pick(self, logits, generator):
        probs = F.softmax(logits[:, -1, :], dim=-1)  # (B, C)
        return torch.multinomial(probs, num_samples=1, generator=generator)  # (B, 1)

    def generate(self, idx, max_new_tokens, generator=None):
        for _ in range(max_new_tokens):
            logits, _ = self(idx)  # (B, T, C)
            idx = torch.cat((idx, self._pick(logits, generator)), dim=1)  # (B, T+1)
        return idx


class _ViewCBT(_Base):
    def _loss(self, logits, targets):
        B, T, C = logits.shape
        # 形状对 (B*T, C)，行却错位 / right shape, wrong rows
        return F.cross_entropy(logits.view(C, B * T).t(), targets.view(B * T))


class _SoftmaxBeforeCE(_Base):
    def _loss(self, logits, targets):
        B, T, C = logits.shape
        probs = F.softmax(logits.view(B * T, C), dim=-1)
        return F.cross_entropy(probs, targets.view(B * T))


class _ArgmaxGenerate(_Base):
    def _pick(self, logits, generator):
        return logits[:, -1, :].argmax(dim=-1, keepdim=True)  # (B, 1)


class _GenerateFromFirst(_Base):
    def _pick(self, logits, generator):
        probs = F.softmax(logits[:, 0, :], dim=-1)  # (B, C): 第一个位置 / the first position
        return torch.multinomial(probs, num_samples=1, generator=generator)


MISTAKES = [
    Mistake(
        id='view_C_BT',
        section="bigram 一课「view 拉平为什么不会错位」",
        zh="展平顺序错了：形状对、不报错，但每一行不再是一个完整的位置",
        en="Wrong flattening: the right size and no error, but rows no longer "
        "hold one position each",
        fix={"zh": "logits.view(B*T, C) 配 targets.view(B*T)：第 b*T+t 行才是位置 (b, t)",
             "en": "logits.view(B*T, C) with targets.view(B*T): row b*T+t is position "
                "(b, t)"},
        overrides={"BigramLanguageModel": _ViewCBT},
        hint=2,
    ),
    Mistake(
        id='softmax_before_cross_entropy',
        section="5.3",
        zh="交叉熵之前先做了 softmax：交给 cross_entropy 的是概率，不是 logits",
        en="softmax before cross-entropy: cross_entropy is given probabilities, "
        "not logits",
        fix={"zh": "F.cross_entropy(logits.view(B*T, C), targets.view(B*T))，直接喂 "
                "logits",
             "en": "F.cross_entropy(logits.view(B*T, C), targets.view(B*T)), the "
                "logits directly"},
        overrides={"BigramLanguageModel": _SoftmaxBeforeCE},
        hint=2,
    ),
    Mistake(
        id='argmax_in_generate',
        section="bigram 一课「generate：自回归的全部」",
        zh="generate 用了 argmax：没有按概率抽签，输出会陷入循环",
        en="argmax in generate: no sampling, so the output falls into a "
        "loop",
        fix={"zh": "probs = F.softmax(logits[:, -1, :], dim=-1)；torch.multinomial(probs, "
                "1, generator=generator)",
             "en": "probs = F.softmax(logits[:, -1, :], dim=-1); torch.multinomial(probs, "
                "1, generator=generator)"},
        overrides={"BigramLanguageModel": _ArgmaxGenerate},
        hint=3,
    ),
    Mistake(
        id='generate_from_first_position',
        section="bigram 一课「❗ 为什么只取最后一个位置」",
        zh="generate 用的不是最后一个位置：前 T−1 个预测对应的字符已经在序列里了",
        en="generate does not use the last position: the first T-1 predictions "
        "are already in the sequence",
        fix={"zh": "取 logits[:, -1, :]（不是 logits[:, 0, :]）",
             "en": "Take logits[:, -1, :] (not logits[:, 0, :])"},
        overrides={"BigramLanguageModel": _GenerateFromFirst},
        hint=3,
    ),
]
