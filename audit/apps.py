from django.apps import AppConfig


class AuditConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "audit"
    verbose_name = "Audit trail"

    def ready(self) -> None:
        from audit import signals  # noqa: F401  (sign-in, failed sign-in and sign-out receivers)
