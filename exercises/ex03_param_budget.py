"""练习 ex03：参数量与显存粗估（见 5.4、5.7 练习 3）。

一个标准 decoder-only Transformer Block 的主要矩阵约 12 × C²
（Q/K/V/O 投影 4C²，MLP 8C²），L 层约 12 × L × C²，再加 embedding 与 LM Head。
本文件只做量级估算（不含 LayerNorm、偏置、位置编码），另加一个真正去数
nn.Module 参数的函数，以及 O(T²) 注意力代价之比（bigram 一课）。

Exercise ex03: parameter and memory budget (see 5.4 and 5.7 exercise 3). The course's
estimate: 12·C² per block (4C² attention + 8C² MLP), 12·L·C² for L layers, plus the
embedding and LM head. Left out on purpose: LayerNorm, biases, position embeddings.
"""

import torch


def block_params(n_embd):
    """一个 Transformer Block 的主要参数量：12 × C²（4C² 注意力 + 8C² MLP）。

    English: the main parameters of one block, 12 * C**2.

    例：C = 768 时约 708 万。
        >>> block_params(768)
        7077888
    """
    raise NotImplementedError("ex03: 在这里实现 block_params / implement block_params here")


def embedding_params(vocab_size, n_embd, tied=False):
    """embedding 加 LM Head 的参数量：共享（tied）时 V × C，不共享时 2 × V × C。

    English: embedding plus LM head: V*C when tied, 2*V*C when untied.

    例（GPT-2 small 的 V=50,257、C=768）：
        >>> embedding_params(50_257, 768)
        77194752
        >>> embedding_params(50_257, 768, tied=True)
        38597376
    """
    raise NotImplementedError("ex03: 在这里实现 embedding_params / implement embedding_params here")


def gpt_params(n_layer, n_embd, vocab_size, tied=False):
    """整个模型的粗估：12 × L × C² + embedding_params(V, C, tied)。

    English: the whole model, 12*L*C**2 plus the embedding/LM head parameters.

    例：L=12、C=768、V=50,257、共享（GPT-2 small 的量级，约 1.24 亿）：
        >>> gpt_params(12, 768, 50_257, tied=True)
        123532032
    """
    raise NotImplementedError("ex03: 在这里实现 gpt_params / implement gpt_params here")


def weight_bytes(n_params, dtype):
    """存下 n_params 个权重需要多少字节。

    English: the bytes needed to hold n_params weights of the given dtype.

    dtype 是 torch.dtype（float64、float32、float16、bfloat16、int8）或字符串
    "fp64" "fp32" "fp16" "bf16" "int8"；其他一律 ValueError。
    每个参数：fp64 8 字节、fp32 4 字节、fp16/bf16 2 字节、int8 1 字节。

    例（GPT-2 small 约 1.24 亿参数的权重）：
        >>> weight_bytes(124_000_000, torch.float16)
        248000000
        >>> weight_bytes(124_000_000, "fp32")
        496000000
    """
    raise NotImplementedError("ex03: 在这里实现 weight_bytes / implement weight_bytes here")


def count_params(module):
    """数一个 nn.Module 里需要梯度的参数个数（共享的同一个 Parameter 只算一次）。

    English: the number of elements in the module's distinct Parameters that require
    grad; a tied weight counts once, buffers and frozen parameters do not count.

    例：nn.Linear(8, 32, bias=False) 有 8 × 32 = 256 个参数：
        >>> count_params(torch.nn.Linear(8, 32, bias=False))
        256
    """
    raise NotImplementedError("ex03: 在这里实现 count_params / implement count_params here")


def attention_cost_ratio(t_long, t_short):
    """注意力计算量之比：O(T²)，所以是 (t_long / t_short) ** 2，返回 float。

    English: the attention cost ratio of two context lengths, (t_long / t_short) ** 2.

    例（bigram 一课）：128K 的算力代价是 8K 的 256 倍（16²）：
        >>> attention_cost_ratio(128_000, 8_000)
        256.0
    """
    raise NotImplementedError("ex03: 在这里实现 attention_cost_ratio / implement attention_cost_ratio here")


# 5.7 练习 3：V=50,000、C=4,096、不共享 embedding 与 LM Head 时二者合计的参数量，
# 以及 FP16 权重的字节数。
# 5.7 exercise 3: V=50,000, C=4,096, untied: parameters of both, and their FP16 bytes.
ANSWER_PARAMS = NotImplemented  # TODO: 填一个 int：参数个数 / an int: the number of parameters
ANSWER_FP16_BYTES = NotImplemented  # TODO: 填一个 int：FP16 权重的字节数 / an int: bytes of the FP16 weights
