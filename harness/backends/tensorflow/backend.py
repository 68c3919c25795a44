"""TensorFlow as a :class:`harness.backends.interface.Backend`."""

from __future__ import annotations

from harness.backends.catalogue import SPECS
from harness.backends.tensorflow import evaluate, facts
from harness.backends.tensorflow.tfimport import start, tf

__all__ = ["BACKEND"]


class TensorFlowBackend:
    spec = SPECS["tensorflow"]
    framework = tf

    @staticmethod
    def start(threads: int | None = None, cache=None) -> None:
        start(threads)  # TensorFlow has no cache of compiled programs across processes

    @staticmethod
    def facts() -> dict:
        return facts.tensorflow_facts()

    @staticmethod
    def probe_flush(dtypes, modes) -> dict:
        return facts.probe_flush(dtypes, modes)

    @staticmethod
    def evaluate_case(
        case, points, dtypes, methods, modes, progress=None, max_order=None, edges=None, batch=None
    ):
        return evaluate.evaluate_case(
            case, points, dtypes, methods, modes, progress, max_order, edges, batch
        )


BACKEND = TensorFlowBackend()
