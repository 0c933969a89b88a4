# ragweb image: one image for the web (gunicorn) and worker (celery) processes.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    # The CPU build of torch: the default index would pull a multi-GB CUDA build.
    PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    # The data folder: uploaded documents in /data/media (compose's media volume), collectstatic's output
    # in /data/staticfiles (made below, inside the image).
    RAGWEB_VAR_DIR=/data

RUN apt-get update \
    && apt-get install -y --no-install-recommends libpq5 \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt

COPY . .
# SECRET_KEY and DATABASE_URL are placeholders for collectstatic alone (it uses neither; without a
# DATABASE_URL the settings would make an embedded-Postgres password under /data).
RUN useradd --system --create-home --uid 1000 ragweb \
    && mkdir -p /data/media && chmod 700 /data/media \
    && SECRET_KEY=build-only-not-a-secret-collectstatic-needs-some-key-0123456789 \
       DATABASE_URL=postgres://unused@localhost/unused python manage.py collectstatic --noinput \
    && chown -R ragweb /data
USER ragweb

EXPOSE 8000
CMD ["gunicorn", "ragweb.wsgi:application", "--bind", "0.0.0.0:8000", "--worker-class", "lib.gunicorn_worker.BufferingThreadWorker", "--workers", "2", "--threads", "16", "--timeout", "120", "--preload"]
