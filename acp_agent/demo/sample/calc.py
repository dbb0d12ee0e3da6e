"""A tiny calculator: the demo asks the agent to fix a bug in it."""


def add(a: float, b: float) -> float:
    return a + b


def average(values: list[float]) -> float:
    """The arithmetic mean of `values`."""
    return sum(values) / len(values) + 1
