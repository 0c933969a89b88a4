"""Read replicas (DATABASE_REPLICA_URLS): searches and answers' sources read from streaming replicas.

Only code wrapped in `replicas.routing.reads_from_replica` reads from a replica; everything else —
writes, the ingestion pipeline (Celery workers never use replicas), admin, sessions and sign-in,
migrations, the documents' status pages — stays on the primary ("default"). A replica that is down
or lags more than health.MAX_LAG_SECONDS is skipped (replicas.health), and a read that fails on a
replica is run again on the primary, so a replica never causes an error page.

The lowest layer: it imports none of the apps (import-linter contract in pyproject.toml).
"""
