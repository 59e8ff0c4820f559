"""ex03 参数量与显存粗估的检查 / checks for the parameter and memory budget (5.4, 5.7 exercise 3)."""

import random

import pytest

from grader.judge import call, check_hand, check_value, probe, read, same
from grader.judge.mistakes import Mistake

pytestmark = pytest.mark.exercise("ex03")


@pytest.mark.public
@pytest.mark.points(1)
def test_answer_params(student, reference):
    """ANSWER_PARAMS：V=50,000、C=4,096、不共享 | ANSWER_PARAMS: V=50,000, C=4,096, untied"""
    check_hand(student, reference, read("ANSWER_PARAMS"))


@pytest.mark.public
@pytest.mark.points(1)
def test_answer_fp16_bytes(student, reference):
    """ANSWER_FP16_BYTES：这些参数的 FP16 字节数 | ANSWER_FP16_BYTES: their FP16 bytes"""
    check_hand(student, reference, read("ANSWER_FP16_BYTES"))


@pytest.mark.points(1)
def test_block_params(student, reference):
    """block_params：每层 12 × C² | block_params: 12 × C² per block"""
    check_value(student, call("block_params", 768), 7_077_888, reference=reference)
    for c in (1, 8, 64, 4096, 1000):
        same(student, reference, call("block_params", c))


@pytest.mark.public
@pytest.mark.points(1)
def test_embedding_params_course(student, reference):
    """embedding_params：课本的 V、C，共享与不共享 | embedding_params: the course's V and C, tied and untied"""
    # the same numbers as ANSWER_PARAMS: a failure here must not give that answer away
    check_hand(student, reference, call("embedding_params", 50_000, 4_096))
    check_hand(student, reference, call("embedding_params", 50_000, 4_096, tied=True))


@pytest.mark.points(1)
def test_embedding_and_gpt_params(student, reference):
    """embedding_params 与 gpt_params：随机的 L、C、V | embedding_params and gpt_params: random L, C, V"""
    rng = random.Random(303)
    for _ in range(4):
        v, c, layers = rng.randrange(10, 60_000), rng.randrange(8, 2_000), rng.randrange(1, 48)
        for tied in (False, True):
            same(student, reference, call("embedding_params", v, c, tied=tied))
            same(student, reference, call("gpt_params", layers, c, v, tied=tied))
    check_value(student, call("gpt_params", 12, 768, 50_257, tied=True), 123_532_032, reference=reference)
    same(student, reference, call("gpt_params", 32, 4_096, 50_000))


@pytest.mark.points(1)
def test_weight_bytes_torch_dtypes(student, reference):
    """weight_bytes：torch.dtype（float64 … int8）| weight_bytes: torch dtypes"""
    check_value(student, probe("ex03.weight_bytes_dtype", 409_600_000, "float16"), 819_200_000, reference=reference,
                hand=True, label="weight_bytes(ANSWER_PARAMS, torch.float16)")
    for name in ("float64", "float32", "float16", "bfloat16", "int8"):
        same(student, reference, probe("ex03.weight_bytes_dtype", 123_456_789, name),
             label=f"weight_bytes(123456789, torch.{name})")


@pytest.mark.points(1)
def test_weight_bytes_strings(student, reference):
    """weight_bytes：字符串 "fp64" … "int8" | weight_bytes: the strings "fp64" … "int8\""""
    for name in ("fp64", "fp32", "fp16", "bf16", "int8"):
        same(student, reference, call("weight_bytes", 7_000_000_000, name))
    same(student, reference, call("weight_bytes", 0, "fp16"))


@pytest.mark.points(1)
def test_weight_bytes_unknown(student, reference):
    """weight_bytes：不认识的 dtype 抛 ValueError | weight_bytes: ValueError for an unknown dtype"""
    for name in ("fp8", "int4", "FP17", "float16"):
        same(student, reference, call("weight_bytes", 1_000, name))
    # a torch.dtype outside the five is "anything else" too (not its element_size())
    for name in ("int32", "float8_e4m3fn"):
        same(student, reference, probe("ex03.weight_bytes_dtype", 1_000, name), label=f"weight_bytes(1000, torch.{name})")


@pytest.mark.points(1)
def test_count_params_plain(student, reference):
    """count_params：普通模块；buffer 和冻结的参数不算 | count_params: plain modules; buffers and frozen ones do not count"""
    same(student, reference, probe("ex03.count_params_of", "plain"),
         label="count_params(m) for nn.Linear, nn.Embedding, an MLP and nn.LayerNorm")
    same(student, reference, probe("ex03.count_params_of", "frozen_and_buffers"),
         label="count_params(m) for modules with buffers and frozen parameters")


@pytest.mark.points(1)
def test_count_params_tied(student, reference):
    """count_params：共享的权重只算一次 | count_params: a tied weight counts once"""
    same(student, reference, probe("ex03.count_params_of", "tied"),
         label="count_params(m) for modules sharing a weight")


@pytest.mark.points(1)
def test_attention_cost_ratio(student, reference):
    """attention_cost_ratio：128K 对 8K 是 256 倍 | attention_cost_ratio: 128K vs 8K is 256"""
    check_value(student, call("attention_cost_ratio", 128_000, 8_000), 256.0, reference=reference)
    check_value(student, call("attention_cost_ratio", 131_072, 8_192), 256.0, reference=reference)
    for long_, short_ in [(1_000, 300), (4_096, 4_096), (100, 1_000), (10, 4)]:
        same(student, reference, call("attention_cost_ratio", long_, short_))


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

def _embedding_params_swapped(vocab_size, n_embd, tied=False):
    """共享与不共享弄反了 / tied and untied swapped."""
    per_table = vocab_size * n_embd
    return 2 * per_table if tied else per_table


def _gpt_params_swapped(n_layer, n_embd, vocab_size, tied=False):
    return 12 * n_layer * n_embd ** 2 + _embedding_params_swapped(vocab_size, n_embd, tied)


def _block_params_c2(n_embd):
    """每层只算了 C²，漏了系数 12 / C**2 instead of 12*C**2."""
    return n_embd ** 2


def _gpt_params_c2(n_layer, n_embd, vocab_size, tied=False):
    per_table = vocab_size * n_embd
    return n_layer * n_embd ** 2 + (per_table if tied else 2 * per_table)


def _weight_bytes_fp32_for_fp16(n_params, dtype):
    """半精度也按 4 字节算 / fp16 and bf16 counted at fp32's 4 bytes."""
    import torch

    bytes_per_param = {"fp64": 8, "fp32": 4, "fp16": 4, "bf16": 4, "int8": 1}
    names = {torch.float64: "fp64", torch.float32: "fp32", torch.float16: "fp16",
             torch.bfloat16: "bf16", torch.int8: "int8"}
    name = names.get(dtype) if isinstance(dtype, torch.dtype) else (dtype if dtype in bytes_per_param else None)
    if name is None:
        raise ValueError(f"unsupported dtype: {dtype!r}")
    return n_params * bytes_per_param[name]


def _count_params_tied_twice(module):
    """共享权重按出现的位置各算一次 / a tied weight counted once per place it appears."""
    return sum(p.numel() for _, p in module.named_parameters(remove_duplicate=False) if p.requires_grad)


MISTAKES = [
    Mistake(
        id='tied_untied_swapped',
        section="5.4、5.7 练习 3",
        zh="共享与不共享弄反了：tied=False 和 tied=True 的结果对调了",
        en="Tied and untied are swapped: the counts for tied=False and tied=True "
        "are the other way round",
        fix={"zh": "不共享（tied=False）时 embedding 和 LM Head 是两张 V × C 的表：2 * V * C；"
                "共享时一张：V * C",
             "en": "Untied (tied=False): two V × C tables, embedding and LM head: "
                "2 * V * C; tied: one, V * C"},
        overrides={"embedding_params": _embedding_params_swapped, "gpt_params": _gpt_params_swapped,
                   "ANSWER_PARAMS": 204_800_000, "ANSWER_FP16_BYTES": 409_600_000},
        hint=2,
    ),
    Mistake(
        id='c2_not_12c2',
        section="5.4",
        zh="每层的参数少算了：只算了一个 C²，漏了注意力和 MLP 里其余的大矩阵",
        en="Too few parameters per layer: one C² only, the other big matrices "
        "of attention and the MLP are missing",
        fix={"zh": "每层 12 * C**2（Q、K、V、O 共 4C²，MLP 8C²）；gpt_params = 12 * L * C**2 "
                "+ embedding_params",
             "en": "Per layer 12 * C**2 (Q, K, V, O: 4C², MLP: 8C²); gpt_params "
                "= 12 * L * C**2 + embedding_params"},
        overrides={"block_params": _block_params_c2, "gpt_params": _gpt_params_c2},
        hint=1,
    ),
    Mistake(
        id='fp16_as_fp32_bytes',
        section="5.7 练习 3",
        zh="FP16 / BF16 每个参数的字节数算错了（按 FP32 算了）",
        en="The bytes per parameter of FP16 / BF16 are wrong (counted as "
        "FP32)",
        fix={"zh": "16 位 = 2 字节：fp16 / bf16 每个参数 2 字节，fp32 4 字节，fp64 8 字节，int8 1 "
                "字节",
             "en": "16 bits are 2 bytes: fp16 / bf16 take 2 bytes per parameter, "
                "fp32 4, fp64 8, int8 1"},
        overrides={"weight_bytes": _weight_bytes_fp32_for_fp16, "ANSWER_FP16_BYTES": 1_638_400_000},
        hint=2,
    ),
    Mistake(
        id='tied_weight_counted_twice',
        section="5.4",
        zh="共享的权重算了两次：同一个 Parameter 出现在两个地方，被数了两遍",
        en="A tied weight is counted twice: one Parameter in two places "
        "was counted in both",
        fix={"zh": "用 module.parameters()（默认去重）：sum(p.numel() for p in module.parameters()"
                " if p.requires_grad)",
             "en": "Use module.parameters() (it removes duplicates): sum(p.numel()"
                " for p in module.parameters() if p.requires_grad)"},
        overrides={"count_params": _count_params_tied_twice},
        hint=3,
    ),
]
