#!/bin/sh
# Run once by the postgres image when it creates the cluster (/docker-entrypoint-initdb.d): standbys
# (docker-compose's replica profile) may stream from it over the compose network, with the password.
# wal_level=replica and max_wal_senders=10 are already Postgres's defaults.
set -e
echo "host replication all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
