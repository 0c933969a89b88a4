from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "corpus"
    verbose_name = "Documents"

    def ready(self) -> None:
        from corpus.graph import receivers  # noqa: F401  (connects the graph merge to publishing)
