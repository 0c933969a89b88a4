"""Embedding batches shared by the documents one worker process builds at the same time.

A worker runs several documents at once (Celery's threads pool: `make run`, docker-compose). Each
document submits its chunk inputs to the process's Encoder as one Job and waits on it; while it
waits, its thread may be the one that encodes: one thread at a time takes the next batch of
EMBEDDING_BATCH_SIZE inputs from the waiting jobs, oldest first — the end of one document and the
start of the next — so small documents do not make small batches, and one document's parsing or
publishing overlaps the encoding of another's. Only one batch runs at a time: one set of torch
threads, the CPUs not oversubscribed. A lone document (one task at a time, a test) is encoded by
its own thread, batch by batch, as before.

Contract: a job's vectors are those embed_texts() gives its inputs alone (padding beside a longer
partner changes a vector by float rounding only); a batch that fails is encoded again job by job,
so only the job whose inputs fail gets the error; a cancelled job's inputs not yet taken are never
encoded.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator

import numpy as np
from django.conf import settings

from corpus.ingest import embed as embedding

Piece = tuple["Job", int, int]  # a job and the [start, end) range of its inputs in one batch


class Job:
    """One document's inputs, waiting in an Encoder; its thread reads progress() or vectors()."""

    def __init__(self, encoder: Encoder, texts: list[str], model: str | None) -> None:
        self.encoder = encoder
        self.texts = texts
        self.model = model
        self.taken = 0  # inputs handed to a batch so far
        self.done = 0  # inputs whose vectors are in
        self.result: np.ndarray | None = None
        self.error: Exception | None = None
        self.cancelled = False

    @property
    def waiting(self) -> bool:
        """Has inputs no batch has taken yet."""
        return not self.cancelled and self.error is None and self.taken < len(self.texts)

    def progress(self) -> Iterator[int]:
        """Yields the number of this job's inputs embedded, each time it grows, until all are
        (encoding batches in this thread when no other thread is); raises the error of this job's
        inputs."""
        reported = 0
        while reported < len(self.texts):
            reported = self.encoder.wait(self, reported)
            yield reported

    def vectors(self) -> np.ndarray:
        """(len(texts), dims) float32, in the order of the texts, once every input is embedded."""
        for _ in self.progress():
            pass
        if self.result is None:  # no texts
            return np.zeros((0, settings.EMBEDDING_DIMENSIONS), dtype=np.float32)
        return self.result

    def cancel(self) -> None:
        """Stop: inputs not yet taken are dropped (a batch already running finishes)."""
        with self.encoder.condition:
            self.cancelled = True
            self.encoder.condition.notify_all()


class Encoder:
    """The jobs of one process and who is encoding them."""

    def __init__(self) -> None:
        self.condition = threading.Condition()
        self._jobs: list[Job] = []
        self._busy = False  # a thread is encoding a batch
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        # A forked child inherits no thread: nobody is encoding there, whatever the parent was doing.
        self.condition = threading.Condition()
        self._jobs = []
        self._busy = False

    def submit(self, texts: list[str], *, model: str | None = None) -> Job:
        job = Job(self, list(texts), model)
        with self.condition:
            self._jobs.append(job)
            self.condition.notify_all()
        return job

    def wait(self, job: Job, reported: int) -> int:
        """Block until more than `reported` of the job's inputs are embedded and return how many,
        encoding batches meanwhile whenever nobody else is; raise the job's error."""
        while True:
            with self.condition:
                while True:
                    if job.error is not None:
                        raise job.error
                    if job.done > reported:
                        return job.done
                    if job.cancelled:
                        raise RuntimeError("the embedding job was cancelled")
                    if not self._busy and any(j.waiting for j in self._jobs):
                        self._busy = True
                        pieces = self._take()
                        break
                    self.condition.wait()
            try:
                self._encode(pieces)
            except BaseException as exc:  # the thread is stopping: its partners must not wait forever
                with self.condition:
                    for other, _, _ in pieces:
                        other.error = other.error or RuntimeError(f"embedding stopped: {exc!r}")
                raise
            finally:
                with self.condition:
                    self._busy = False
                    self.condition.notify_all()

    def _take(self) -> list[Piece]:
        """Up to EMBEDDING_BATCH_SIZE inputs of one model, oldest jobs first (called holding the lock)."""
        self._jobs = [j for j in self._jobs if j.waiting]
        model = self._jobs[0].model
        room = settings.EMBEDDING_BATCH_SIZE
        pieces = []
        for job in self._jobs:
            if room == 0:
                break
            if job.model == model:
                start, end = job.taken, min(len(job.texts), job.taken + room)
                job.taken = end
                room -= end - start
                pieces.append((job, start, end))
        return pieces

    def _encode(self, pieces: list[Piece]) -> None:
        texts = [text for job, start, end in pieces for text in job.texts[start:end]]
        try:
            vectors = embedding.embed_texts(texts, model=pieces[0][0].model)
        except Exception as exc:
            if len(pieces) > 1:
                # Whose inputs fail? Each document's alone: only that one gets the error.
                for piece in pieces:
                    self._encode([piece])
                return
            with self.condition:
                pieces[0][0].error = exc
            return
        with self.condition:
            offset = 0
            for job, start, end in pieces:
                if job.result is None:
                    job.result = np.zeros((len(job.texts), vectors.shape[1]), dtype=np.float32)
                job.result[start:end] = vectors[offset: offset + end - start]
                job.done += end - start
                offset += end - start


ENCODER = Encoder()  # the process's one encoder
