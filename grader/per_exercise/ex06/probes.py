"""Probes for ex06 (CharTokenizer): build the submission's tokenizer, report plain data.

The corpus is read here, inside the worker, from the path the check passes in.
"""

import random

import torch

from grader.fixtures.corpus import read_corpus


def _chars_of(tok):
    """chars as a list of str, whatever sequence the student used (input to `tables`); chars
    that are no sequence at all come back as they are (the kit's reading raises nothing)."""
    chars = tok.chars
    try:
        return [str(c) for c in chars]
    except TypeError:
        return chars


def vocab_facts(mod, path):
    """The tokenizer built on tiny Shakespeare: vocab_size, chars, itos[0], itos[1], as returned
    (the judge counts the chars and picks the digits)."""
    tok = mod.CharTokenizer(read_corpus(path))
    return {"vocab_size": tok.vocab_size, "chars": tok.chars, "id0": _itos_at(tok.itos, 0), "id1": _itos_at(tok.itos, 1)}


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
    """itos[i], or None where there is no such id (dict or list alike): the kit's own reading
    of a table, whose KeyError is not the student's code raising (ids that start at 1)."""
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
        "stoi": {c: _itos_at(tok.stoi, c) for c in sorted(set(text))},
        "itos": [_itos_at(tok.itos, i) for i in range(len(set(text)))],
    }


def roundtrips(mod, seed, n_texts, max_len):
    """decode(encode(s)) for seeded random strings s drawn from each text's own vocabulary.

    Each case: a random training text (its vocabulary), then strings made of that
    vocabulary, decoded from a list and from a 1-D tensor, and decode(ids + ids) (s twice).
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
        # and the ids twice over, a sequence encode never returned: a decode that looks up what
        # encode saw (a memo keyed by the ids) decodes it for real
        out.append([tok.decode(list(ids)), tok.decode(torch.tensor([int(i) for i in ids], dtype=torch.long)),
                    tok.decode(list(ids) * 2)])
    return out


def unknown_char(mod, text, s):
    """Encode a string holding a character `text` lacks: what was raised (its classes' names,
    its args and message, as the student's code made them), or what came back."""
    tok = mod.CharTokenizer(text)
    try:
        value = tok.encode(s)
    except Exception as err:  # the student's error, reported (the judge reads it)
        args = [a if type(a) in (str, int, float) else repr(a) for a in err.args]
        return {"raised": [c.__name__ for c in type(err).__mro__], "args": args, "message": str(err)}
    return {"raised": None, "returned": value}


def corpus_roundtrip(mod, path):
    """encode the whole corpus, then decode the ids, and its first TWICE ids twice over: as
    returned (the judge compares them with the corpus it reads itself)."""
    text = read_corpus(path)
    tok = mod.CharTokenizer(text)
    ids = tok.encode(text)
    head = list(ids[:TWICE]) if isinstance(ids, list) else []
    return {"ids": ids, "back": tok.decode(ids), "twice": tok.decode(head * 2)}


TWICE = 2000  # the first ids of the corpus, decoded twice over: a sequence encode never returned
