"""Checks for ex13: byte-level BPE (bigram lesson, "BPE is counted, not designed").

Merges are compared with the reference's exactly (the contract pins ties, the stopping
rule and non-overlapping replacement); encode is checked with the reference's merges, so
a mistake in train_bpe is not charged again there; the round trip uses the student's own
merges, so it holds for any consistent implementation.
"""

import random

import pytest

from grader.judge import check_value, probe, same

pytestmark = pytest.mark.exercise("ex13")

MINBPE = "aaabdaaabac"
MINBPE_MERGES = [((97, 97), 256), ((256, 97), 257), ((257, 98), 258)]
CHINESE = "从零写出一个 GPT。token 是自己定义的：模型词表里的一个条目，对应一个整数 ID。"
EMOJI = "🤗 hello 🤗🤗 你好 👨‍👩‍👧 ÿé 🤗 你好世界"


def _char(rng):
    """One code point: ASCII, Latin-1, Chinese, emoji, or anything that is not a surrogate."""
    kind = rng.random()
    if kind < 0.35:
        return rng.choice("abcde  \n.,")
    if kind < 0.45:
        return chr(rng.randint(0xA0, 0xFF))
    if kind < 0.7:
        return rng.choice("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年") if rng.random() < 0.7 \
            else chr(rng.randint(0x4E00, 0x9FFF))
    if kind < 0.85:
        return chr(rng.randint(0x1F600, 0x1F64F)) if rng.random() < 0.5 else rng.choice(["🤗", "👍🏽", "\u200d", "🇨🇳"])
    while True:
        cp = rng.randint(0, 0x10FFFF)
        if not 0xD800 <= cp <= 0xDFFF:
            return chr(cp)


def random_text(seed, n):
    rng = random.Random(seed)
    return "".join(_char(rng) for _ in range(n))


def small_alphabet_text(seed, n, alphabet="abcab"):
    """Few symbols: many pairs tie, so the tie rule decides."""
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


@pytest.mark.public
@pytest.mark.points(2)
def test_lesson_examples(student, reference):
    """课文与 minbpe 的例子：'aaabdaaabac'，e + s → es | The worked examples"""
    check_value(student, probe("ex13.train", MINBPE, 259), MINBPE_MERGES,
                label=f"train_bpe({MINBPE!r}, 259)", reference=reference)
    check_value(student, probe("ex13.train", "es es es", 257), [((101, 115), 256)],
                label="train_bpe('es es es', 257)", reference=reference)


@pytest.mark.public
@pytest.mark.points(1)
def test_encode_decode_examples(student, reference):
    """存根里的 encode / decode 例子 | The stub's encode / decode examples"""
    check_value(student, probe("ex13.encode", MINBPE, MINBPE_MERGES), [258, 100, 258, 97, 99],
                label=f"bpe_encode({MINBPE!r}, merges)", reference=reference)
    check_value(student, probe("ex13.encode", "你", []), [228, 189, 160], label="bpe_encode('你', [])",
                reference=reference)
    check_value(student, probe("ex13.decode", [228, 189, 160], []), "你", label="bpe_decode([228, 189, 160], [])",
                reference=reference)
    check_value(student, probe("ex13.decode", [258, 100], MINBPE_MERGES), "aaabd",
                label="bpe_decode([258, 100], merges)", reference=reference)
    # the same ids twice over, which no encode returned: decoded, not looked up
    check_value(student, probe("ex13.decode", [228, 189, 160] * 2, []), "你你",
                label="bpe_decode([228, 189, 160, 228, 189, 160], [])", reference=reference)
    check_value(student, probe("ex13.decode", [258, 100] * 2, MINBPE_MERGES), "aaabd" * 2,
                label="bpe_decode([258, 100, 258, 100], merges)", reference=reference)


@pytest.mark.points(2)
def test_no_overlapping_replacement(student, reference):
    """不重叠地从左到右替换：b'aaa' → [256, 97] | Non-overlapping replacement, left to right"""
    for text, vocab in [("aaa", 300), ("aaaa", 300), ("aaaaaaa", 300), ("aaabaaab", 300), ("xaaay" * 3, 300)]:
        same(student, reference, probe("ex13.train", text, vocab), label=f"train_bpe({text!r}, {vocab})")
    merges = [((97, 97), 256)]
    for text in ("aaa", "aaaa", "baaaab"):
        same(student, reference, probe("ex13.encode", text, merges), label=f"bpe_encode({text!r}, [((97, 97), 256)])")


@pytest.mark.points(2)
def test_ties_first_occurrence(student, reference):
    """次数并列时取最先出现的那一对 | Ties: the pair that occurs first"""
    for text, vocab in [("cdcdabab", 258), ("zyzyab ab", 300), ("bababa aba", 300), ("你好好你", 260)]:
        same(student, reference, probe("ex13.train", text, vocab), label=f"train_bpe({text!r}, {vocab})")
    for seed in range(4):
        text = small_alphabet_text(seed, 40)
        same(student, reference, probe("ex13.train", text, 270), label=f"train_bpe(<{len(text)} chars of a/b/c>, 270)")


@pytest.mark.points(1)
def test_stopping(student, reference):
    """次数 < 2 就停；到 vocab_size 就停；空文本 | Stop below count 2, at vocab_size; empty text"""
    cases = [("abcdef", 1000), ("abab", 1000), (CHINESE, 256), (CHINESE, 257), (CHINESE * 2, 300), ("", 300), ("a", 260)]
    for text, vocab in cases:
        same(student, reference, probe("ex13.train", text, vocab), label=f"train_bpe({text[:12]!r}…, {vocab})")
    same(student, reference, probe("ex13.encode", "", MINBPE_MERGES), label="bpe_encode('', merges)")
    same(student, reference, probe("ex13.decode", [], MINBPE_MERGES), label="bpe_decode([], merges)")


@pytest.mark.points(1)
def test_vocab_size_below_256(student, reference):
    """vocab_size < 256：ValueError | vocab_size below 256 raises ValueError"""
    for vocab in (255, 0, 100):
        same(student, reference, probe("ex13.train", "hello", vocab), label=f"train_bpe('hello', {vocab})")


@pytest.mark.points(2)
def test_train_random_texts(student, reference):
    """随机文本（中英文、emoji）上的合并表与参考一致 | Random texts: the reference's merges"""
    texts = [(random_text(seed, 120), 256 + 30) for seed in range(4)]
    texts += [(CHINESE * 3, 300), (EMOJI * 2, 290), (small_alphabet_text(9, 300, "ab \n"), 320)]
    for text, vocab in texts:
        same(student, reference, probe("ex13.train", text, vocab), label=f"train_bpe(<{len(text)} chars>, {vocab})")


@pytest.mark.points(2)
def test_encode_with_reference_merges(student, reference):
    """用参考的合并表 encode：新 id 小的先合并 | Encode with the reference's merges, lowest id first"""
    for seed, (train_text, vocab) in enumerate([(CHINESE * 3 + EMOJI, 320), (MINBPE * 4, 270),
                                                (small_alphabet_text(3, 400, "abc "), 300)]):
        merges = reference.observe(probe("ex13.train", train_text, vocab)).value
        for text in (train_text[:60], random_text(100 + seed, 50), CHINESE + EMOJI, "aaab" * 3):
            same(student, reference, probe("ex13.encode", text, merges),
                 label=f"bpe_encode(<{len(text)} chars>, <{len(merges)} merges>)")


@pytest.mark.points(1)
def test_decode_whole_bytes(student, reference):
    """先拼整串字节再解码；无效字节换成 � | Decode the whole byte string; invalid bytes become �"""
    split_char = [((189, 160), 256)]  # '你' = e4 bd a0: the token 256 holds its last two bytes
    same(student, reference, probe("ex13.decode", [228, 256], split_char), label="bpe_decode([228, 256], [((189, 160), 256)])")
    same(student, reference, probe("ex13.decode", [228, 189], []), label="bpe_decode([228, 189], [])")
    same(student, reference, probe("ex13.decode", [104, 255, 105], []), label="bpe_decode([104, 255, 105], [])")
    merges = reference.observe(probe("ex13.train", EMOJI * 3, 300)).value
    ids = reference.observe(probe("ex13.encode", EMOJI, merges)).value
    same(student, reference, probe("ex13.decode", ids, merges), label="bpe_decode(bpe_encode(emoji text))")


@pytest.mark.points(2)
def test_roundtrip_own_merges(student, reference, draws):
    """decode(encode(t)) == t：中文、emoji、任意 Unicode | Round trip for any string"""
    # hidden inputs: the random texts drawn per submission when the course has a secret (grader.judge.draws)
    texts = [CHINESE, EMOJI, "", "a", "aaa", "\x00\n\t", "𠮷野家"] + [random_text(draws.seed(200 + s), 80) for s in range(6)]
    for train_text, vocab in [(CHINESE * 2 + EMOJI * 2, 320), (random_text(draws.seed(7), 300), 300), ("aaaa" * 10, 262)]:
        same(student, reference, probe("ex13.roundtrip", train_text, vocab, texts),
             label=f"decode(encode(t)) with train_bpe(<{len(train_text)} chars>, {vocab})")
