"""Probes for ex06 (CharTokenizer): build the submission's tokenizer, report plain data.

The corpus is read here, inside the worker, from the path the check passes in.
"""

import random

import torch

from grader.probes._data import read_corpus


def _chars_of(tok):
    """chars as a list of str, whatever sequence the student used."""
    return [str(c) for c in tok.chars]


def vocab_facts(mod, path):
    """The lesson's facts about the vocabulary of tiny Shakespeare."""
    tok = mod.CharTokenizer(read_corpus(path))
    chars = _chars_of(tok)
    return {
        "vocab_size": tok.vocab_size,  # as returned: the contract's int, judged by the judge
        "len_chars": len(chars),
        "id0": tok.itos[0],
        "id1": tok.itos[1],
        "digits": [c for c in chars if c.isdigit()],
    }


def encode_corpus(mod, path, s):
    """encode(s) with the tokenizer built on the corpus, as returned (the contract: a list of ints)."""
    tok = mod.CharTokenizer(read_corpus(path))
    return tok.encode(s)


def decode_corpus(mod, path, ids, as_tensor=False):
    """decode(ids) with the tokenizer built on the corpus (ids as a list or a 1-D tensor)."""
    tok = mod.CharTokenizer(read_corpus(path))
    if as_tensor:
        ids = torch.tensor(ids, dtype=torch.long)
    return tok.decode(ids)


def _itos_at(itos, i):
    """itos[i], or None where there is no such id (dict or list alike)."""
    try:
        return itos[i]
    except (KeyError, IndexError):
        return None


def tables(mod, text):
    """chars, vocab_size, stoi and itos of a tokenizer built on a small text."""
    tok = mod.CharTokenizer(text)
    chars = _chars_of(tok)
    return {
        "chars": chars,
        "vocab_size": tok.vocab_size,
        "stoi": {c: tok.stoi[c] for c in sorted(set(text))},
        "itos": [_itos_at(tok.itos, i) for i in range(len(set(text)))],
    }


def roundtrips(mod, seed, n_texts, max_len):
    """decode(encode(s)) for seeded random strings s drawn from each text's own vocabulary.

    Each case: a random training text (its vocabulary), then strings made of that
    vocabulary, decoded from a list and from a 1-D tensor.
    """
    rng = random.Random(seed)
    alphabet = "\n !',-.:;?abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ3&$你好龍é"
    out = []
    for _ in range(n_texts):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80)))
        tok = mod.CharTokenizer(text)
        vocab = sorted(set(text))
        s = "".join(rng.choice(vocab) for _ in range(rng.randint(0, max_len)))
        ids = tok.encode(s)
        out.append([tok.decode(list(ids)), tok.decode(torch.tensor([int(i) for i in ids], dtype=torch.long))])
    return out


def unknown_char(mod, text, s, char):
    """Encode a string holding `char`, which `text` lacks: which error, and does it name the char?"""
    tok = mod.CharTokenizer(text)
    try:
        tok.encode(s)
    except KeyError as err:
        named = char in err.args or char in str(err) or repr(char) in str(err)
        return {"raised": "KeyError", "names_the_char": bool(named)}
    return {"raised": None, "names_the_char": False}


def corpus_roundtrip(mod, path):
    """encode the whole corpus, then decode it: a digest of the ids and whether the text came back.

    The decoded text's length and digest come back too, so two decodes that are wrong in
    different ways (one joins with spaces, one drops the newlines) are told apart."""
    import hashlib

    text = read_corpus(path)
    tok = mod.CharTokenizer(text)
    ids = [int(i) for i in tok.encode(text)]
    digest = hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()
    back = tok.decode(ids)
    back_text = back if isinstance(back, str) else repr(type(back))
    return {"n_ids": len(ids), "ids_sha256": digest, "decoded_equals_text": back == text,
            "decoded_len": len(back_text), "decoded_sha256": hashlib.sha256(back_text.encode("utf-8", "replace")).hexdigest()}
