#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragweb.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        from django.db.utils import OperationalError

        execute_from_command_line(sys.argv)
    except ImproperlyConfigured as error:
        # A bad setting is the operator's to fix: one line saying which, not a traceback.
        sys.exit(f"ragweb: configuration error: {error}")
    except OperationalError as error:
        # The database cannot be reached (a dead DATABASE_URL, a stopped server): psycopg's first line
        # names the host and port; the stacked tracebacks under it say nothing more.
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        sys.exit(f"ragweb: cannot use the database: {first} (check DATABASE_URL, or start the embedded "
                 "services: make services-start)")


if __name__ == "__main__":
    main()
