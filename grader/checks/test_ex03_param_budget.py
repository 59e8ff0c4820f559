"""ex03 参数量与显存粗估的检查 / checks for the parameter and memory budget (5.4, 5.7 exercise 3)."""

import random

import pytest

from grader.judge import call, check_value, probe, read, same

pytestmark = pytest.mark.exercise("ex03")


@pytest.mark.public
@pytest.mark.points(1)
def test_answer_params(student, reference):
    """ANSWER_PARAMS：V=50,000、C=4,096、不共享 | ANSWER_PARAMS: V=50,000, C=4,096, untied"""
    check_value(student, read("ANSWER_PARAMS"), 409_600_000, reference=reference, hand=True)


@pytest.mark.public
@pytest.mark.points(1)
def test_answer_fp16_bytes(student, reference):
    """ANSWER_FP16_BYTES：这些参数的 FP16 字节数 | ANSWER_FP16_BYTES: their FP16 bytes"""
    check_value(student, read("ANSWER_FP16_BYTES"), 819_200_000, reference=reference, hand=True)


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
    check_value(student, call("embedding_params", 50_000, 4_096), 409_600_000, reference=reference, hand=True)
    check_value(student, call("embedding_params", 50_000, 4_096, tied=True), 204_800_000, reference=reference, hand=True)


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
