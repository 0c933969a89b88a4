# ragweb: `make run` serves the app, `make test` runs the suite (`make test-slow` the long, harness-like tests it
# leaves out; CI runs both). All work from a fresh clone.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
# `make run` installs the runtime pins only (requirements.txt, what the Docker image installs); the targets that
# test, lint, evaluate or benchmark install the development pins on top (requirements-dev.txt). Each install is
# remembered by a stamp named after its files' contents, so an edited requirements file installs again.
RUN_STAMP := $(VENV)/.installed-run-$(shell cat requirements.txt | sha1sum | cut -c1-12)
DEV_STAMP := $(VENV)/.installed-dev-$(shell cat requirements.txt requirements-dev.txt | sha1sum | cut -c1-12)
# --no-compile: pip byte-compiles every module it installs (torch's thousands among them), most of which the
# app never imports; Python compiles a module (once, into __pycache__) when it is first imported instead
# (docs/first-start.md). The pins are pip freeze's, complete (tests/test_docker_compose.py), so --no-deps:
# nothing is left for pip's resolver to find.
PIP_INSTALL := $(PY) -m pip install --quiet --no-compile --no-deps
PORT ?= 8000
# The development evaluation set (corpus + questions), beside the checkout.
EVAL_DIR ?= ../shared/eval

.PHONY: run test test-slow install install-dev services-start services-stop migrate chromium lint eval eval-answers eval-answers-pdf eval-answers-html eval-answers-md eval-answers-tables eval-answers-heldout eval-grounding train-reader eval-packages eval-manpages bench-embed bench-ingest bench-latency bench-scale bench-workers reliability clean bench-replica eval-ocr measure-memory eval-parse

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-compile --upgrade pip

$(RUN_STAMP): requirements.txt | $(PY)
	$(PIP_INSTALL) -r requirements.txt
	rm -f $(VENV)/.installed-run-*
	touch $(RUN_STAMP)

$(DEV_STAMP): requirements.txt requirements-dev.txt | $(PY)
	$(PIP_INSTALL) -r requirements-dev.txt
	rm -f $(VENV)/.installed-*
	touch $(RUN_STAMP) $(DEV_STAMP)

# What `make run` needs.
install: $(RUN_STAMP)
# What the tests, the lint, the evaluations and the benchmarks need besides.
install-dev: $(DEV_STAMP)

run: install
	PORT=$(PORT) $(PY) scripts/run.py

services-start: install
	$(PY) scripts/services.py start

# The commands below need the schema; `make run` migrates on its own.
migrate: services-start
	$(PY) manage.py migrate --noinput -v 0

services-stop:
	$(PY) scripts/services.py stop

# Debian's chromium for the browser tests; installed only when missing and we may (root).
chromium:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: sudo apt-get install chromium" >&2; exit 1; fi; }

# Every test but those marked `slow` (killed workers, two workers, whole-app start-ups, the slow drip,
# bombs parsed in a subprocess): about ten minutes on a quiet 2-core machine.
# Two pytest-xdist workers, a test file each at a time (module fixtures stay in one process); each has its own
# test database and Redis databases (tests/xdist_redis.py). A third of a serial run is waiting, not CPU.
test: install-dev chromium services-start
	$(PY) -m pytest -m "not slow" -n 2 --dist loadfile $(PYTEST_ARGS)

# The tests marked `slow`: each takes tens of seconds because it runs a real process to its end (docs/development.md).
test-slow: install-dev chromium services-start
	$(PY) -m pytest -m slow $(PYTEST_ARGS)

# Faults, hostile input, security and load against the app started as `make run` starts it (its own
# ports and data under var/reliability); prints a summary table. RELIABILITY_ARGS="--quick" for a short run.
reliability: install-dev
	$(PY) -m reliability $(RELIABILITY_ARGS)

# RSS and PSS of the app's own processes (make run's, on free ports under var/reliability) with the demo
# corpus: idle, after 50 search clients, after 10 ask clients (docs/scaling.md, "Memory").
measure-memory: install-dev
	$(PY) -m reliability --only memory --load-seconds 30 $(RELIABILITY_ARGS)

lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports

# Ingests the development corpus first (unchanged files are skipped: a few seconds after the first time).
eval: install-dev migrate
	CELERY_TASK_ALWAYS_EAGER=1 $(PY) manage.py ingest $(EVAL_DIR)/django-docs --collection django-docs --wait --quiet
	$(PY) manage.py evaluate $(EVAL_DIR)/django_dev.jsonl --collection django-docs --docs $(EVAL_DIR)/django-docs

# The answers themselves (the chat's answer pipeline, no LLM unless LLM_BASE_URL is set): evidence in
# the answer beside a naive baseline's, cited sources, abstention on near-topic unanswerable and
# off-topic questions, conversations with follow-ups and topic switches; PASS/FAIL per target.
ANSWER_DATA := chat/evaluation/data
eval-answers: install-dev migrate
	CELERY_TASK_ALWAYS_EAGER=1 $(PY) manage.py ingest $(EVAL_DIR)/django-docs --collection django-docs --wait --quiet
	$(PY) manage.py evaluate_answers $(EVAL_DIR)/django_dev.jsonl --collection django-docs \
	    --unanswerable $(ANSWER_DATA)/django_unanswerable.jsonl --offtopic $(ANSWER_DATA)/django_offtopic.jsonl \
	    --conversations $(ANSWER_DATA)/django_followups.jsonl $(ANSWER_DATA)/django_conversations.jsonl --scorers auto heuristic

# The same on held-out corpora nobody tuned on, committed with their licences (docs/evaluation.md):
# PDF manuals (the cited page scored too) and HTML guides. The off-topic questions are the development
# ones: none of them is near these corpora either.
HELDOUT_ANSWERS = CELERY_TASK_ALWAYS_EAGER=1 $(PY) manage.py ingest $(ANSWER_DATA)/$(1)/docs --collection $(1) --wait --quiet && \
	$(PY) manage.py evaluate_answers $(ANSWER_DATA)/$(1)/questions.jsonl --collection $(1) \
	    --unanswerable $(ANSWER_DATA)/$(1)/unanswerable.jsonl --offtopic $(ANSWER_DATA)/django_offtopic.jsonl \
	    --conversations $(ANSWER_DATA)/$(1)/conversations.jsonl --evidence-target 0.80 --report var/eval-answers-$(1) \
	    --scorers auto heuristic
eval-answers-pdf: install-dev migrate
	$(call HELDOUT_ANSWERS,pdf-manuals)
eval-answers-html: install-dev migrate
	$(call HELDOUT_ANSWERS,html-guides)
# Markdown, plain-text and DOCX guides (Postfix, pino, Commander.js).
eval-answers-md: install-dev migrate
	$(call HELDOUT_ANSWERS,md-guides)
# Spreadsheets and CSV: questions a table row answers, near-topic ones the tables do not (no conversations).
eval-answers-tables: install-dev migrate
	for set in tables tables-2; do \
	  CELERY_TASK_ALWAYS_EAGER=1 $(PY) manage.py ingest $(ANSWER_DATA)/$$set/docs --collection $$set --wait --quiet && \
	  $(PY) manage.py evaluate_answers $(ANSWER_DATA)/$$set/questions.jsonl --collection $$set \
	    --unanswerable $(ANSWER_DATA)/$$set/unanswerable.jsonl --offtopic $(ANSWER_DATA)/django_offtopic.jsonl \
	    --evidence-target 0.80 --report var/eval-answers-$$set --scorers auto heuristic || exit 1; \
	done
eval-answers-heldout: eval-answers-pdf eval-answers-html eval-answers-md eval-answers-tables

# The grounding pass's claim checks (word overlap, the reader) on the labelled grounding set
# (chat/evaluation/data/grounding; no database, about a minute).
eval-grounding: install-dev
	$(PY) manage.py evaluate_grounding

# The reader (reader/): rebuilds reader/model/ from the committed training pairs (chat/evaluation/reader_training/data;
# READER_ARGS="--rebuild-data" makes them again from the installed packages first). ~40 min on 2 cores.
train-reader: install-dev
	$(PY) -m chat.evaluation.reader_training $(READER_ARGS)

# A held-out check: the installed packages' READMEs, each package's summary as its question.
eval-packages: install-dev migrate
	$(PY) manage.py make_package_eval var/package-eval
	CELERY_TASK_ALWAYS_EAGER=1 $(PY) manage.py ingest var/package-eval/docs --collection package-docs --wait --quiet
	$(PY) manage.py evaluate var/package-eval/questions.jsonl --collection package-docs \
	    --docs var/package-eval/docs --runs bm25 vector hybrid hybrid:rrf --report var/package-eval/report

eval-manpages: install-dev migrate
	$(PY) manage.py make_manpage_eval var/manpage-eval
	CELERY_TASK_ALWAYS_EAGER=1 $(PY) manage.py ingest var/manpage-eval/docs --collection manpage-docs --wait --quiet
	$(PY) manage.py evaluate var/manpage-eval/questions.jsonl --collection manpage-docs \
	    --docs var/manpage-eval/docs --runs bm25 vector hybrid hybrid:rrf --report var/manpage-eval/report
	$(PY) manage.py evaluate var/manpage-eval/options.jsonl --collection manpage-docs --docs var/manpage-eval/docs \
	    --runs bm25 vector hybrid hybrid:rrf hybrid+rse:balanced hybrid+rse:find_all --report var/manpage-eval/options-report
	$(PY) manage.py evaluate var/manpage-eval/identifiers.jsonl --collection manpage-docs \
	    --docs var/manpage-eval/docs --runs bm25 vector hybrid hybrid:rrf --report var/manpage-eval/identifiers-report

# OCR: character error rate and pages per second on scans of a known text (no database needed).
eval-ocr: install-dev
	$(PY) manage.py eval_ocr

# Every parser on the fidelity suite's real documents (Chromium, LibreOffice, groff, man; docs/evaluation.md):
# characters and words right, words lost and doubled, per format x producer (no database needed).
eval-parse: install-dev
	$(PY) manage.py eval_parse

bench-latency: install-dev migrate
	$(PY) manage.py bench_search --queries $(EVAL_DIR)/django_dev.jsonl $(BENCH_ARGS)

# ragweb at a million chunks (docs/scaling.md): synthetic chunks drawn from the development corpus,
# grown to each size; drops and rebuilds the chunk indexes, so run it on a benchmark database only.
# An hour or more on 2 cores; SCALE_SIZES=100000 for a short run.
SCALE_SIZES ?= 100000,1000000
# Its searches answer nothing: the real collection is ingested without sentence vectors (eagerly, they would be
# embedded inline, ~5 sentences a chunk: most of the ingestion's time).
bench-scale: install-dev migrate
	CELERY_TASK_ALWAYS_EAGER=1 ANSWER_VECTORS_AT_INGESTION=0 $(PY) manage.py ingest $(EVAL_DIR)/django-docs --collection django-docs --wait --quiet
	$(PY) manage.py bench_scale --queries $(EVAL_DIR)/django_dev.jsonl --sizes $(SCALE_SIZES) $(BENCH_ARGS)

# A sustained upload into the table bench-scale left (BENCH_ARGS=--keep there): publish rate, merge rate, the graph's
# tail and search p95 every 30 s for SUSTAINED_SECONDS (docs/scaling.md, "A merge that keeps up"); BENCH_ARGS=--no-pace
# for the publish step without the tail's bound; BENCH_ARGS="--nice 19" for the publishers and the merger at the
# Celery pool processes' priority (lib.priority).
.PHONY: bench-sustained
SUSTAINED_SECONDS ?= 600
bench-sustained: install migrate
	$(PY) manage.py bench_scale --queries $(EVAL_DIR)/django_dev.jsonl --sustained $(SUSTAINED_SECONDS) $(BENCH_ARGS)

# Ingestion with 1 and 2 pinned workers and 1/2/4 shared ones against bare encode (docs/scaling.md).
# Needs the broker (make services-start) and no other worker running.
bench-workers: install-dev migrate
	RAGWEB_REDIS_DB=$${RAGWEB_REDIS_DB:-6} $(PY) manage.py bench_workers $(BENCH_ARGS)

# The embedding model on torch float32, ONNX float32 and ONNX int8 side by side (docs/scaling.md, "Embedding
# runtime"): encode throughput at 800-character chunks, query-embedding latency, and MRR@10 of the development
# set with the collection re-embedded on each runtime (it ends on EMBEDDING_MODEL again).
bench-embed: install-dev migrate
	CELERY_TASK_ALWAYS_EAGER=1 $(PY) manage.py ingest $(EVAL_DIR)/django-docs --collection django-docs --wait --quiet
	$(PY) manage.py bench_embed --docs $(EVAL_DIR)/django-docs --queries $(EVAL_DIR)/django_dev.jsonl \
	    --collection django-docs $(BENCH_ARGS)

bench-ingest: install-dev migrate
	$(PY) manage.py bench_ingest $(BENCH_ARGS)

# A streaming standby of the embedded Postgres: routing and lag-check costs, replay delay of a large write.
bench-replica: install-dev migrate
	$(PY) -m tests.replicas.measure

clean:
	$(PY) scripts/services.py stop || true
	rm -rf var
