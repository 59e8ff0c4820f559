"""Checks for ex09: the bigram model (bigram lesson, "(B, T, C)", "view", "generate")."""

import pytest
import torch

from grader.judge import Tol, call, check_value, probe, same
from grader.judge.derived import derived
import torch.nn as nn
import torch.nn.functional as F
from grader.judge.mistakes import Mistake

pytestmark = pytest.mark.exercise("ex09")


def _ids(shape, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(vocab, shape, generator=g).tolist()


@pytest.mark.public
@pytest.mark.points(1)
def test_param_count(student, reference):
    """V=65：4,225 个参数，一张 nn.Embedding(65, 65) | 4,225 parameters for 65"""
    check_value(student, probe("ex09.structure", 65),
                {"is_nn_module": True, "n_params": 4225, "table_is_embedding": True, "table_shape": (65, 65)},
                label="BigramLanguageModel(65)", reference=reference)


@pytest.mark.points(1)
def test_param_count_other_sizes(student, reference):
    """其他词表大小 | Other vocabulary sizes"""
    for v in (3, 27, 100):
        same(student, reference, probe("ex09.structure", v), label=f"BigramLanguageModel({v})")


@pytest.mark.public
@pytest.mark.points(1)
def test_forward_without_targets(student, reference):
    """没有 targets：logits (B, T, V)，loss 是 None | Without targets: (B, T, V) logits, loss None"""
    same(student, reference, probe("ex09.forward", 65, _ids((4, 8), 65, 0)), label="model(idx (4, 8))")


@pytest.mark.points(2)
def test_forward_with_targets(student, reference):
    """有 targets：拉平后的交叉熵，数值对 | With targets: the cross-entropy of the flattened logits"""
    for (B, T), V, seed in [((4, 8), 65, 1), ((2, 3), 5, 2), ((1, 1), 7, 3), ((3, 5), 65, 4)]:
        same(student, reference, probe("ex09.forward", V, _ids((B, T), V, seed), _ids((B, T), V, seed + 100),
                                       wseed=seed),
             label=f"model(idx ({B}, {T}), targets) with V={V}", tol=Tol(rtol=1e-4, atol=1e-5))


@pytest.mark.points(1)
def test_loss_gradient(student, reference):
    """loss 可以反传，梯度正确 | The loss back-propagates to the right gradient"""
    same(student, reference, probe("ex09.loss_gradient", 11, _ids((3, 4), 11, 5), _ids((3, 4), 11, 6), wseed=5),
         label="d loss / d table", tol=Tol(rtol=1e-4, atol=1e-6))


@pytest.mark.points(2)
def test_generate_same_tokens(student, reference):
    """同一个 generator → 同样的 token | generate draws the reference's tokens"""
    for idx, n, seed in [(_ids((3, 4), 65, 7), 20, 0), ([[0]], 30, 1337), (_ids((2, 1), 10, 8), 15, 3)]:
        same(student, reference, probe("ex09.generate", 65 if seed != 3 else 10, idx, n, wseed=seed, gseed=seed),
             label=f"generate(idx {len(idx)}×{len(idx[0])}, max_new_tokens={n})")


@pytest.mark.points(1)
def test_generate_global_generator(student, reference):
    """不给 generator 时用全局随机数 | Without a generator, the global one"""
    same(student, reference, probe("ex09.generate_global", 65, _ids((2, 3), 65, 9), 10, wseed=9, gseed=9),
         label="torch.manual_seed(9); generate(idx (2, 3), 10)")


@pytest.mark.points(1)
def test_generate_from_last_position(student, reference):
    """从最后一个位置接着生成 | generate continues from the last position"""
    same(student, reference, probe("ex09.generate_peaked", 12, [[3, 7, 1, 9], [0, 0, 5, 2]], 6),
         label="generate on a table where id i is followed by i+1")


@pytest.mark.public
@pytest.mark.points(1)
def test_one_hot_lookup_h(student, reference):
    """one-hot × W：'h'（46）取出 W 的第 46 行 | one-hot of 'h' times W is row 46"""
    g = torch.Generator().manual_seed(46)
    W = torch.randn(65, 65, generator=g)  # (V, V)
    same(student, reference, call("one_hot_lookup", torch.tensor([[46]]), W), label="one_hot_lookup([[46]], W)")


@pytest.mark.points(1)
def test_one_hot_lookup_general(student, reference):
    """任意形状的 idx、非方阵的 W | Any idx shape, a non-square W"""
    g = torch.Generator().manual_seed(9)
    W = torch.randn(20, 7, generator=g)  # (V, C)
    idx = torch.randint(5, (3, 4), generator=g)  # ids < 5 < V: V comes from W, not idx
    same(student, reference, call("one_hot_lookup", idx, W), label="one_hot_lookup(idx (3, 4), W (20, 7))")
    idx2 = torch.randint(20, (2, 6), generator=g)
    same(student, reference, call("one_hot_lookup", idx2, W), label="one_hot_lookup(idx (2, 6), W (20, 7))")


@pytest.mark.public
@pytest.mark.points(1)
def test_flat_index_example(student, reference):
    """flat_index(2, 3, 8) == 19 | flat_index(2, 3, 8) == 19"""
    check_value(student, call("flat_index", 2, 3, 8), 19, reference=reference)


@pytest.mark.points(1)
def test_flat_index_rows(student, reference):
    """view(B*T, C) 的第 flat_index(b, t, T) 行就是位置 (b, t) | The row really holds (b, t)"""
    for B, T, C in [(4, 8, 65), (3, 1, 2), (1, 5, 3), (2, 7, 4)]:
        facts = rows_facts(B, T, C)
        same(derived(student, facts), derived(reference, facts), probe("ex09.flat_rows", B, T, C),
             label=f"flat_index for B={B}, T={T}")


def rows_facts(B, T, C, seed=0):
    """From the indices a worker reported: does row rows[b][t] of x.view(B*T, C) hold x[b, t]
    for a random (B, T, C) tensor x, and is every index an int? Computed here, in the judge."""

    def facts(rows):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(B, T, C, generator=g)  # (B, T, C)
        flat = x.view(B * T, C)  # (B*T, C)
        shaped = type(rows) is list and len(rows) == B and all(type(r) is list and len(r) == T for r in rows)
        ints = shaped and all(type(i) is int for r in rows for i in r)
        holds = ints and all(0 <= rows[b][t] < B * T and torch.equal(flat[rows[b][t]], x[b, t])
                             for b in range(B) for t in range(T))
        return {"rows": rows, "rows_hold_positions": bool(holds)}

    return facts


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

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
