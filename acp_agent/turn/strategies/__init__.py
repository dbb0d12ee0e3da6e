"""Turn strategies: each drives the one runner under the one meter (docs/decisions.md D9).

`tools` is the plain loop, `verify` evaluates each attempt and feeds failures back, `phased` runs
plan → act → verify. A new strategy is a new module: a class with `name` and `run()`, and, for
fields of its own in the turn record, a `TurnRecord` subclass (`record_type`, `record_fields()`).
"""
