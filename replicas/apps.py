from django.apps import AppConfig
from django.core.signals import request_started


class ReplicasConfig(AppConfig):
    name = "replicas"
    verbose_name = "Read replicas"

    def ready(self) -> None:
        from replicas import routing

        # A request thread is reused: what the previous request wrote must not pin this one.
        request_started.connect(routing.forget_writes, dispatch_uid="replicas.forget_writes")
