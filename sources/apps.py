from django.apps import AppConfig


class SourcesConfig(AppConfig):
    name = "sources"
    verbose_name = "Sources"

    def ready(self) -> None:
        from sources import receivers  # noqa: F401  (connects the signal receivers)
