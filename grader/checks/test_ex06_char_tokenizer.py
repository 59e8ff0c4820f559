"""Checks for ex06: the character tokenizer (bigram lesson, "the data changed")."""

import hashlib
import random

import pytest

from grader.judge import check_value, probe, same
from grader.judge.derived import derived

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
