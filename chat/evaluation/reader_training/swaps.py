"""Near-topic unanswerable questions made by changing one word of an answerable question.

People's near-topic questions name the subject a document covers and ask for a detail it does not
state ("How many emails per second can send_mass_mail() send?"). Removing the answer from the
candidates (build.UNANSWERABLE_EVERY) teaches the reader that a question needs its answer; it does
not teach that a sentence on the subject is no answer when it lacks the detail asked for. Here a
word of the question that its answer holds is replaced by a related word that none of the question's
candidates hold ("closed" -> "opened", "norm" -> "trace"): the question is still on the subject, and
now every candidate, its former answer first, is a negative.

The related word is a neighbour by the packaged bi-encoder in a band of cosine similarity: close
enough to keep the question natural and on the subject, far enough not to be a synonym (a synonym
would make the former answer still answer, a wrong label). Words sharing their first four letters
(a form of the same word: "retry", "retries") are never chosen.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict

SEED = 20261207
# Related, not synonymous (cosine of the bi-encoder's vectors of the two words alone).
BAND = (0.30, 0.50)
# Word cosine alone lets synonyms through (parameter/argument 0.44): the swapped question must also
# be this much less like its former answer than the question was (the bi-encoder, whole texts).
DROP = 0.05
# The most frequent words of the corpus ("version", "parameter", "number") are the likeliest to have
# a synonym among their neighbours and the least likely to be the detail a question turns on.
COMMON = 300
NEIGHBOURS = 8
MIN_COUNT = 3
VOCABULARY = 30000
# Of the rule-made questions, this share gets a swapped twin; every model-written and FAQ question does.
RULE_SHARE = 0.25
# Whole plain words only: a part of an identifier ("prompt" in default_prompt_name) is not a word to swap.
_WORD = re.compile(r"\b[A-Za-z][a-z]{3,}\b")
_STOP = frozenset("""
about above after again also always another anything before being below between both cannot could does doing
done each either every from have having here into itself just like made make many more most much must need needs
never only other over same should since some such than that their them then there these they thing this those
through under until upon used uses using very want what when where whether which while will with within without
would your yours happen happens happened possible default true false none value values return returns function
method class object given example different another""".split())


def _form(word: str) -> str:
    """The inflection a word shows, so that a replacement reads as the same part of speech."""
    for ending in ("ing", "ed", "ly", "ss", "s"):
        if word.endswith(ending):
            return ending
    return ""


def _unrelated_forms(word: str, other: str) -> bool:
    return word[:4] != other[:4] and word not in other and other not in word


def _stem(word: str) -> str:
    return word.lower()[:5]


def _words(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text)}


def vocabulary(pairs: list[dict]) -> list[str]:
    """The lower-case content words of the questions and candidates, the most frequent first."""
    counts: Counter[str] = Counter()
    for pair in pairs:
        counts.update(w.lower() for w in _WORD.findall(pair["q"]))
        counts.update(w.lower() for w in _WORD.findall(pair["c"]))
    return [w for w, n in counts.most_common(VOCABULARY) if n >= MIN_COUNT and w not in _STOP]


def neighbours(words: list[str], embed, needed: set[str]) -> dict[str, list[str]]:
    """For each word of `needed` in `words`: up to NEIGHBOURS words of `words` in BAND, closest first,
    none a form of the word itself, each showing the same inflection ("-s", "-ed", "-ing"...)."""
    import numpy as np

    index = {w: i for i, w in enumerate(words)}
    vectors = np.asarray(embed(words), dtype=np.float32)
    out: dict[str, list[str]] = {}
    wanted = [w for w in sorted(needed) if w in index]
    for start in range(0, len(wanted), 512):
        chunk = wanted[start:start + 512]
        sims = vectors[[index[w] for w in chunk]] @ vectors.T
        for word, row in zip(chunk, sims, strict=True):
            order = np.argsort(-row)
            near = [words[j] for j in order[:400] if BAND[0] <= row[j] <= BAND[1]
                    and _unrelated_forms(word, words[j]) and _form(words[j]) == _form(word)]
            if near:
                out[word] = near[:NEIGHBOURS]
    return out


def _swappable(question: str, answer: str) -> list[str]:
    held = _words(answer)
    return sorted({w for w in _WORD.findall(question) if w.lower() not in _STOP and _stem(w) in held})


def _chosen(group: str, rng: random.Random) -> bool:
    if group.startswith(("gen-", "faq-")):
        return "-gone" not in group and "-x" not in group
    return not group.startswith("table-") and rng.random() < RULE_SHARE


def swapped_pairs(pairs: list[dict], embed, *, seed: int = SEED) -> list[dict]:
    """New groups, one for each chosen answerable question: the question with one word its answer holds
    replaced by a related word no candidate of the group holds, every candidate labelled 0. Groups are
    named after the question's own with "-swap" (so that the training's sample keeps the model-written
    and FAQ ones, as it keeps their originals)."""
    rng = random.Random(seed)
    groups: dict[str, list[dict]] = defaultdict(list)
    for pair in pairs:
        groups[pair["g"]].append(pair)
    plans = []
    for name in sorted(groups):
        members = groups[name]
        answers = [p for p in members if p["y"] == 1]
        if len(answers) != 1 or not _chosen(name, rng):
            continue
        words = _swappable(answers[0]["q"], answers[0]["c"])
        if words:
            plans.append((name, members, rng.choice(words)))
    words = vocabulary(pairs)
    common = set(words[:COMMON])
    plans = [plan for plan in plans if plan[2].lower() not in common]
    near = neighbours(words, embed, {w.lower() for _, _, w in plans})
    made = []
    for name, members, word in plans:
        held = set().union(*(_words(p["c"]) for p in members)) | _words(members[0]["q"])
        options = [n for n in near.get(word.lower(), []) if _stem(n) not in held]
        if not options:
            continue
        new = rng.choice(options[:4])
        if word[0].isupper():
            new = new.capitalize()
        question = re.sub(rf"\b{re.escape(word)}\b", new, members[0]["q"], count=1)
        if question != members[0]["q"]:
            made.append((name, members, question))
    if not made:
        return []
    import numpy as np

    answers = [next(p for p in members if p["y"] == 1) for _, members, _ in made]
    before = np.asarray(embed([p["q"] for p in answers]))
    after = np.asarray(embed([question for _, _, question in made]))
    target = np.asarray(embed([p["c"] for p in answers]))
    drop = (before * target).sum(1) - (after * target).sum(1)
    out = []
    for (name, members, question), fell in zip(made, drop, strict=True):
        if fell >= DROP:
            out += [{"q": question, "c": p["c"], "y": 0, "g": f"{name}-swap"} for p in members]
    return out
