from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"

    def ready(self) -> None:
        from chat import receivers  # noqa: F401  (connects the corpus signals' receivers)
