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
        id="tied_untied_swapped",
        section="5.4、5.7 练习 3",
        zh="共享与不共享弄反了：不共享（tied=False）时 embedding 和 LM Head 是两张 V × C 的表，共 2 × V × C；"
        "共享时只有一张（见 5.4「再加 embedding/LM head」与 5.7 练习 3）",
        en="Tied and untied are swapped: untied (tied=False) means two V × C tables, embedding and "
        "LM head, 2 × V × C in all; tied means one (5.4 and 5.7 exercise 3)",
        overrides={"embedding_params": _embedding_params_swapped, "gpt_params": _gpt_params_swapped,
                   "ANSWER_PARAMS": 204_800_000, "ANSWER_FP16_BYTES": 409_600_000},
        hint=2,
    ),
    Mistake(
        id="c2_not_12c2",
        section="5.4",
        zh="每层只算了 C²：Q/K/V/O 约 4C²，MLP 约 8C²，每层合计约 12 × C²（见 5.4）",
        en="Only C² per layer: Q/K/V/O are about 4C², the MLP about 8C², 12 × C² per layer (5.4)",
        overrides={"block_params": _block_params_c2, "gpt_params": _gpt_params_c2},
        hint=1,
    ),
    Mistake(
        id="fp16_as_fp32_bytes",
        section="5.7 练习 3",
        zh="FP16 / BF16 按 4 字节算了：16 位 = 2 字节，FP32 才是 4 字节"
        "（见 5.7 练习 3：4.096 亿参数的 FP16 权重约 8.192 亿字节）",
        en="FP16 / BF16 counted as 4 bytes: 16 bits are 2 bytes, only FP32 takes 4 "
        "(5.7 exercise 3: 409.6M FP16 weights are about 819.2M bytes)",
        overrides={"weight_bytes": _weight_bytes_fp32_for_fp16, "ANSWER_FP16_BYTES": 1_638_400_000},
        hint=2,
    ),
    Mistake(
        id="tied_weight_counted_twice",
        section="5.4",
        zh="共享的权重算了两次：embedding 和 LM Head 共用同一个 Parameter 时，它只占一份参数"
        "（model.parameters() 默认就会去重；见 5.4）",
        en="A tied weight is counted twice: when the embedding and the LM head share one Parameter, "
        "it is one set of parameters (model.parameters() already removes duplicates; 5.4)",
        overrides={"count_params": _count_params_tied_twice},
        hint=3,
    ),
]
