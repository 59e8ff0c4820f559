"""ex03 参数与显存粗估的已知错误 / known mistakes of the parameter and memory budget."""

from grader.judge.mistakes import Mistake


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
