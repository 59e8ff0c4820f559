"""Checks for ex06: the character tokenizer (bigram lesson, "the data changed")."""

import hashlib
import random

import pytest

from grader.judge import check_value, probe, same
from grader.judge.derived import derived
from grader.judge.mistakes import Mistake

pytestmark = pytest.mark.exercise("ex06")


@pytest.mark.public
@pytest.mark.points(2)
def test_course_vocab(student, reference, corpus_path):
    """tiny Shakespeare 的词表：65 个字符，0 是换行，1 是空格，只有数字 3 | The lesson's vocabulary facts"""
    check_value(derived(student, vocab_view), probe("ex06.vocab_facts", corpus_path),
                {"vocab_size": 65, "len_chars": 65, "id0": "\n", "id1": " ", "digits": ["3"]},
                label="CharTokenizer(tiny Shakespeare)", reference=derived(reference, vocab_view), words=VOCAB_WORDS)


VOCAB_WORDS = {  # what each of the lesson's facts says when it differs
    "vocab_size": ("tiny Shakespeare 有 65 个不同的字符", "tiny Shakespeare has 65 distinct characters"),
    "len_chars": ("chars 应当列出这 65 个字符，每个一次", "chars should list those 65 characters, each once"),
    "id0": ("itos[0] 应当是换行（词表排序后第一个）", "itos[0] should be the newline (the first, sorted)"),
    "id1": ("itos[1] 应当是空格", "itos[1] should be the space"),
    "digits": ("字符里唯一的数字是 3", "the only digit among the characters is 3"),
}


def vocab_view(value: dict) -> dict:
    """From what the worker reported: vocab_size and itos[0], itos[1] as returned, the number
    of chars and the digits among them (chars may be any sequence of one-character strings)."""
    chars = value["chars"]
    chars = list(chars) if type(chars) in (list, tuple, str) else []
    return {"vocab_size": value["vocab_size"], "len_chars": len(chars), "id0": value["id0"], "id1": value["id1"],
            "digits": [c for c in chars if type(c) is str and c.isdigit()]}


@pytest.mark.public
@pytest.mark.points(1)
def test_encode_hi(student, reference, corpus_path):
    """encode("hi") == [46, 47] | encode("hi") == [46, 47]"""
    check_value(student, probe("ex06.encode_corpus", corpus_path, "hi"), [46, 47],
                label='encode("hi")', reference=reference)


@pytest.mark.public
@pytest.mark.points(1)
def test_text_start(student, reference, corpus_path):
    """课文开头 "First Cit" 的编号 | The ids of the text's start"""
    check_value(student, probe("ex06.encode_corpus", corpus_path, "First Cit"),
                [18, 47, 56, 57, 58, 1, 15, 47, 58], label='encode("First Cit")', reference=reference)


@pytest.mark.public
@pytest.mark.points(1)
def test_decode_hi(student, reference, corpus_path):
    """decode([46, 47]) == "hi"（list 与一维张量）| decode a list and a 1-D tensor"""
    check_value(student, probe("ex06.decode_corpus", corpus_path, [46, 47]), "hi",
                label="decode([46, 47])", reference=reference)
    check_value(student, probe("ex06.decode_corpus", corpus_path, [46, 47], as_tensor=True), "hi",
                label="decode(torch.tensor([46, 47]))", reference=reference)


@pytest.mark.points(2)
def test_tables_small_texts(student, reference):
    """小语料上的 chars / stoi / itos / vocab_size | chars, stoi, itos, vocab_size on small texts"""
    rng = random.Random(6)
    texts = ["hello", "banana\n band", "ROMEO:\nO Romeo, Romeo!", "zyx cba", "aaaa", "你好，世界 hi\n",
             "".join(rng.choice("\n !?abcXYZ3") for _ in range(50))]
    for text in texts:
        same(student, reference, probe("ex06.tables", text), label=f"CharTokenizer({text!r})")


@pytest.mark.points(2)
def test_roundtrip_random(student, reference, draws):
    """随机字符串 decode(encode(s)) == s | decode(encode(s)) == s on seeded random strings"""
    for seed in (0, 1):  # hidden inputs: drawn per submission when the course has a secret (grader.judge.draws)
        same(student, reference, probe("ex06.roundtrips", draws.seed(seed), 20, 60),
             label=f"decode(encode(s)) for 20 random s (seed {seed})")


@pytest.mark.points(1)
def test_empty(student, reference):
    """空字符串与空列表 | the empty string and the empty list"""
    same(student, reference, probe("ex06.roundtrips", 7, 5, 0), label='decode(encode(""))')


@pytest.mark.points(1)
def test_unknown_char_keyerror(student, reference):
    """词表外的字符：KeyError，且异常里带着这个字符 | An unknown character raises KeyError naming it"""
    expected = {"raised": "KeyError", "names_the_char": True}
    for text, s, ch in [("hello", "help", "p"), ("abc", "Xab", "X"), ("First Citizen", "First 9", "9")]:
        check_value(derived(student, raised_naming(ch)), probe("ex06.unknown_char", text, s), expected,
                    label=f"CharTokenizer({text!r}).encode({s!r})", reference=derived(reference, raised_naming(ch)))


def raised_naming(char: str):
    """From what the worker reported about the call: was a KeyError raised, naming `char`?"""

    def facts(value: dict) -> dict:
        classes = value.get("raised")
        if type(classes) is not list:
            return {"raised": None, "names_the_char": False}
        message = value.get("message") if type(value.get("message")) is str else ""
        named = char in value.get("args", []) or char in message or repr(char) in message
        return {"raised": "KeyError" if "KeyError" in classes else str(classes[0]), "names_the_char": bool(named)}

    return facts


@pytest.mark.points(1)
def test_whole_corpus(student, reference, corpus_path):
    """整部莎士比亚 encode 再 decode | Encode and decode the whole corpus"""
    with open(corpus_path, encoding="utf-8") as corpus:  # the judge reads the corpus itself
        facts = roundtrip_facts(corpus.read())
    same(derived(student, facts), derived(reference, facts), probe("ex06.corpus_roundtrip", corpus_path),
         label="tiny Shakespeare round trip")


TWICE = 2000  # grader.probes.ex06.TWICE: the corpus's first ids, decoded twice over


def roundtrip_facts(text: str):
    """From the ids and the text that came back: their count and digests, and whether the text
    is the corpus (two decodes wrong in different ways, one joining with spaces, one dropping
    the newlines, are told apart by the decoded text's length and digest), and whether the
    first TWICE ids twice over decode to the corpus's start twice (a sequence encode never
    returned: a decode that looks up what encode saw is told apart). Computed here."""

    def facts(value: dict) -> dict:
        ids, back = value["ids"], value["back"]
        if type(ids) is list and all(type(i) is int for i in ids):
            ids_digest = hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()
        else:
            ids_digest = f"not a list of int ({type(ids).__name__})"
        back_text = back if type(back) is str else repr(type(back).__name__)
        head = ids[:TWICE] if type(ids) is list else []
        # the text of those ids, read here from the corpus: a char per id
        twice_ok = type(value.get("twice")) is str and value["twice"] == text[:len(head)] * 2
        return {"n_ids": len(ids) if type(ids) is list else None, "ids_sha256": ids_digest,
                "decoded_equals_text": back == text, "decoded_len": len(back_text),
                "decoded_sha256": hashlib.sha256(back_text.encode("utf-8", "replace")).hexdigest(),
                "decodes_its_first_ids_twice_over": twice_ok}

    return facts


# ---------------------------------------------------------------- known mistakes
# Each a small variant of the reference that a check above must catch and name
# (grader.judge.mistakes); its `fix` goes into the last hint level.

_SECTION = "bigram 一课「数据换了，切法也得换」"


class _UnsortedTokenizer:
    """词表按首次出现的顺序，没有排序 / vocabulary in order of first appearance."""

    def __init__(self, text):
        self.chars = list(dict.fromkeys(text))
        self.vocab_size = len(self.chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.itos = {i: ch for i, ch in enumerate(self.chars)}

    def encode(self, s):
        return [self.stoi[ch] for ch in s]

    def decode(self, ids):
        return "".join(self.itos[int(i)] for i in ids)


class _SetOrderTokenizer:
    """词表是 list(set(text))：集合的顺序，每次运行都可能不同 / the vocabulary in a set's order."""

    def __init__(self, text):
        self.chars = list(set(text))
        self.vocab_size = len(self.chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.itos = {i: ch for i, ch in enumerate(self.chars)}

    def encode(self, s):
        return [self.stoi[ch] for ch in s]

    def decode(self, ids):
        return "".join(self.itos[int(i)] for i in ids)


def _orders_meant(text: str) -> list[list[str]]:
    """The orders of a text's characters a student may mean: sorted, reversed, first seen, by count."""
    from collections import Counter

    ordered = sorted(set(text))
    return [ordered, ordered[::-1], list(dict.fromkeys(text)), [c for c, _ in Counter(text).most_common()]]


def _in_no_fixed_order(seen) -> bool:
    """Whether every call of the check is a tokenizer's table built consistently on its chars
    (stoi and itos their inverse maps, vocab_size their count), with chars the text's characters
    in some order, and at least one text's chars in none of the orders a student means: a set's
    order (`list(set(text))`), which differs from one process to the next, so no variant can
    reproduce the student's answer to compare it with (grader.judge.mistakes)."""
    arbitrary = False
    for s in seen:
        if s.call.probe != "ex06.tables" or not s.got.ok or type(s.got.value) is not dict:
            return False
        text, value = s.call.args[0], s.got.value
        chars, want = value.get("chars"), sorted(set(text))
        if type(chars) is not list or sorted(chars) != want or value.get("vocab_size") != len(want):
            return False
        if value.get("stoi") != {c: chars.index(c) for c in want} or value.get("itos") != chars:
            return False
        arbitrary = arbitrary or chars not in _orders_meant(text)
    return arbitrary


class _OffByOneTokenizer:
    """编号从 1 开始 / ids start at 1."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.vocab_size = len(self.chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars, start=1)}
        self.itos = {i: ch for i, ch in enumerate(self.chars, start=1)}

    def encode(self, s):
        return [self.stoi[ch] for ch in s]

    def decode(self, ids):
        return "".join(self.itos[int(i)] for i in ids)


class _DecodeSkipsZeroTokenizer:
    """decode 里写了 `if i`，编号 0（换行）被丢掉 / `if i` drops id 0 (the newline)."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.vocab_size = len(self.chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.itos = {i: ch for i, ch in enumerate(self.chars)}

    def encode(self, s):
        return [self.stoi[ch] for ch in s]

    def decode(self, ids):
        return "".join(self.itos[int(i)] for i in ids if int(i))


class _DecodeDropsLastTokenizer:
    """decode 漏了最后一个编号 / decode loses the last id."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self.vocab_size = len(self.chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.itos = {i: ch for i, ch in enumerate(self.chars)}

    def encode(self, s):
        return [self.stoi[ch] for ch in s]

    def decode(self, ids):
        ids = [int(i) for i in ids]
        return "".join(self.itos[ids[k]] for k in range(len(ids) - 1))


MISTAKES = [
    Mistake(
        id='unsorted_vocab',
        section=_SECTION,
        zh="词表没有排序：字符的编号和课文对不上（课文里 0 是换行、1 是空格、'h' 是 46）",
        en="The vocabulary is not sorted, so the ids differ from the lesson's "
        "(0 is the newline, 1 the space, 'h' is 46)",
        fix={"zh": "chars = sorted(set(text))，stoi = {ch: i for i, ch in enumerate(chars)"
                "}",
             "en": "chars = sorted(set(text)), stoi = {ch: i for i, ch in enumerate(chars)"
                "}"},
        overrides={"CharTokenizer": _UnsortedTokenizer},
        hint=2,
    ),
    Mistake(
        id='set_order_vocab',
        section=_SECTION,
        zh="词表没有排序：list(set(text)) 的顺序是集合的顺序，不固定（每次运行 Python 都可能不同），"
        "所以字符的编号和课文对不上，换一次运行还会变",
        en="The vocabulary is not sorted: list(set(text)) is in a set's order, which is not fixed (it can "
        "change each time Python runs), so the ids differ from the lesson's, and from one run to the next",
        fix={"zh": "chars = sorted(set(text))（排序后编号才固定：0 是换行、1 是空格）",
             "en": "chars = sorted(set(text)) (sorted, the ids are fixed: 0 is the newline, 1 the space)"},
        overrides={"CharTokenizer": _SetOrderTokenizer},
        explains=_in_no_fixed_order,
        hint=2,
    ),
    Mistake(
        id='off_by_one_ids',
        section=_SECTION,
        zh="编号差一：所有编号都比课文的大 1（换行应当是 0 号）",
        en="Ids off by one: every id is one more than the lesson's (the "
        "newline should be id 0)",
        fix={"zh": "enumerate(chars) 从 0 开始，不要 start=1",
             "en": "enumerate(chars) from 0, no start=1"},
        overrides={"CharTokenizer": _OffByOneTokenizer},
        hint=2,
    ),
    Mistake(
        id='decode_skips_id0',
        section="bigram 一课「token 是自己定义的」",
        zh="decode 丢了编号 0（换行）：它被当成「假」跳过了，decode(encode(s)) 还原不出 s",
        en="decode drops id 0 (the newline): it is falsy and got skipped, "
        "so decode(encode(s)) does not give s back",
        fix={"zh": "\"\".join(self.itos[int(i)] for i in ids)，不要写 if i",
             "en": "\"\".join(self.itos[int(i)] for i in ids), without an if i"},
        overrides={"CharTokenizer": _DecodeSkipsZeroTokenizer},
        hint=3,
    ),
    Mistake(
        id='decode_drops_last',
        section="bigram 一课「token 是自己定义的」",
        zh="decode 丢了最后一个字符：最后一个编号没有被还原",
        en="decode drops the last character: the last id is not decoded",
        fix={"zh": "遍历全部 ids（不要 range(len(ids) - 1)）",
             "en": "Go over all the ids (not range(len(ids) - 1))"},
        overrides={"CharTokenizer": _DecodeDropsLastTokenizer},
        hint=3,
    ),
]
