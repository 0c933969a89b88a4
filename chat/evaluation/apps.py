from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    """Evaluation and benchmark commands. Production code never imports this package."""

    name = "chat.evaluation"
    label = "evaluation"
